import { limits } from '../../src';
import { snapshotArguments } from '../../src/tools/arguments';

// Regression (issue 10, defect 3): arguments reusing one sub-object (`o = [o, o]` thirty times) made
// the copy walk every path, 2^30 of them, with the 1 MiB cap checked only at the end. The copy now
// counts canonical bytes as it goes and stops at the cap, so its work is linear in the cap. Work is
// counted in property reads (getters and proxy traps), not timed.

/** An object whose two members are getters to the same child, `depth` levels deep; counts reads. */
function sharedTree(depth: number, reads: { n: number }): object {
  let node: object = {};
  for (let i = 0; i < depth; i++) {
    const child = node;
    node = Object.defineProperties({}, {
      a: { enumerable: true, get: () => (reads.n++, child) },
      b: { enumerable: true, get: () => (reads.n++, child) },
    });
  }
  return node;
}

describe('regression: exponential argument copy', () => {
  it('refuses a DAG of shared sub-objects after reads linear in the byte cap, not in its paths', () => {
    const reads = { n: 0 };
    // 2^21 paths (4 million reads for a walk of every path), over 1 MiB of canonical JSON.
    expect(snapshotArguments({ t: sharedTree(21, reads) }).ok).toBe(false);
    // Each member read counts at least its key, quotes, colon and comma (5 bytes): ≤ 1 MiB / 5 reads.
    expect(reads.n).toBeLessThanOrEqual(Math.ceil(limits.argumentBytesMax / 5));
  });

  it('refuses `o = [o, o]` nested thirty times (2^30 paths) instead of walking them', () => {
    let o: unknown[] = [];
    for (let i = 0; i < 30; i++) o = [o, o];
    expect(snapshotArguments({ o }).ok).toBe(false);
  });

  it('refuses an array too long for the cap before reading its items', () => {
    let gets = 0;
    const items = new Proxy(new Array<number>(20_000_000), { get: (target, key, receiver) => (key !== 'length' && gets++, Reflect.get(target, key, receiver)) });
    expect(snapshotArguments({ items }).ok).toBe(false);
    expect(gets).toBe(0);
  });

  it('refuses one string shared under two keys once the second pushes it over the cap', () => {
    const s = 'x'.repeat(600_000);
    expect(snapshotArguments({ a: s }).ok).toBe(true);
    expect(snapshotArguments({ a: s, b: s }).ok).toBe(false);
  });

  it('counts no more than the canonical bytes: an array of small numbers near the cap is admitted', () => {
    const zeros = new Array<number>(500_000).fill(0); // canonical: 1,000,001 bytes in a 1 MiB cap
    const snap = snapshotArguments({ z: zeros });
    expect(snap.ok && snap.bytes).toBe(Buffer.byteLength(JSON.stringify({ z: zeros })));
    const members = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, i % 10])); // ≈ 1 MB
    expect(snapshotArguments(members).ok).toBe(Buffer.byteLength(JSON.stringify(members)) <= limits.argumentBytesMax);
  });

  it('still admits arguments just under the cap and refuses them one byte over', () => {
    const base = { s: '' };
    const overhead = Buffer.byteLength(JSON.stringify(base));
    const fits = snapshotArguments({ s: 'é'.repeat((limits.argumentBytesMax - overhead) / 2) });
    expect(fits.ok && fits.bytes).toBe(limits.argumentBytesMax);
    expect(snapshotArguments({ s: 'é'.repeat((limits.argumentBytesMax - overhead) / 2) + 'x' }).ok).toBe(false);
  });
});

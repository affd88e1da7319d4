// ConsistencyTail: the O(log n) subtrees a checkpoint publisher records after its last checkpoint
// (from the head frontier's merges, no hashing of its own), and the consistency proofs it builds
// from them with the two frontiers, including after a reopen that resumes from a configured
// checkpoint older than the log's head.
import { createHash } from 'node:crypto';
import { createLedger, sqliteStore, type Ledger } from '../../src';
import {
  checkpointPublisher,
  CompactFrontier,
  consistencyProof,
  generateSignerKey,
  merkleHasher,
  MerkleTree,
  nodeCrypto,
  rangeRootOfLeaves,
  verifyConsistency,
  type PublishedCheckpoint,
} from '../../src/transparency';
import { ConsistencyTail } from '../../src/transparency/consistencyTail';
import { sqliteTempDir } from '../support/sqliteFiles';

const hasher = merkleHasher(nodeCrypto);
const leaves = Array.from({ length: 130 }, (_, i) => hasher.leaf(createHash('sha256').update(`leaf ${i}`).digest()));
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

const datas = Array.from({ length: 130 }, (_, i) => createHash('sha256').update(`leaf ${i}`).digest());

/** A frontier of `from` leaves and the tail recorded while it grows to `to` (by leaf data, as the publisher appends). */
function grown(from: number, to: number): { frontier: CompactFrontier; anchor: CompactFrontier; tail: ConsistencyTail } {
  const frontier = new CompactFrontier(hasher);
  for (let i = 0; i < from; i++) frontier.appendLeaf(datas[i] as Buffer);
  const anchor = frontier.copy();
  const tail = new ConsistencyTail(hasher, from);
  for (let i = from; i < to; i++) frontier.appendLeaf(datas[i] as Buffer, tail.record);
  return { frontier, anchor, tail };
}

test('every range after `from` is answered with the root the RFC recursion gives, or refused: never a wrong root', () => {
  const wrong: string[] = [];
  let answered = 0;
  for (const from of [0, 1, 3, 5, 8, 13, 32]) {
    const { tail, frontier } = grown(from, from + 67);
    for (let start = from; start < tail.size; start++) {
      for (let end = start + 1; end <= tail.size; end++) {
        let root: Uint8Array;
        try {
          root = tail.rangeRoot(start, end, frontier);
        } catch (error) {
          if (!(error instanceof RangeError)) wrong.push(`${from}:[${start},${end}) threw ${String(error)}`);
          continue;
        }
        answered++;
        if (hex(root) !== hex(rangeRootOfLeaves(hasher, leaves, start, end))) wrong.push(`${from}:[${start},${end})`);
      }
    }
  }
  expect(wrong).toEqual([]);
  // The ranges it answers are those a proof from `from` can ask for (every one of them: the proofs below).
  expect(answered).toBeGreaterThan(7);
});

test('a range before `from`, empty or past the size is refused, never answered wrongly', () => {
  const { tail, frontier } = grown(5, 20);
  expect(() => tail.rangeRoot(4, 8, frontier)).toThrow(RangeError);
  expect(() => tail.rangeRoot(8, 8, frontier)).toThrow(RangeError);
  expect(() => tail.rangeRoot(8, 21, frontier)).toThrow(RangeError);
});

test('it keeps at most one subtree per height, however far the tree grows past `from`', () => {
  const { tail } = grown(3, 130);
  const kept = (tail as unknown as { siblings: (Uint8Array | undefined)[] }).siblings.filter((s) => s !== undefined);
  expect(kept.length).toBeLessThanOrEqual(Math.ceil(Math.log2(130)) + 1);
});

test('consistency proofs from every size m to every n ≤ 130, from the anchor frontier and the subtrees since, verify', () => {
  const tree = new MerkleTree(hasher);
  for (const leaf of leaves) tree.appendLeafHash(leaf);
  const failures: string[] = [];
  for (let m = 1; m <= 130; m++) {
    for (let n = m; n <= 130; n += m < 20 ? 1 : 7) {
      const { anchor, tail, frontier } = grown(m, n);
      const ranges = anchor.ranges();
      const proof = consistencyProof(m, n, (start, end) => (end <= m ? (ranges.find((r) => r.start === start && r.end === end) as { root: Uint8Array }).root : tail.rangeRoot(start, end, frontier)));
      if (hex(frontier.root()) !== hex(tree.root(n)) || proof.map(hex).join() !== tree.consistencyProof(m, n).map(hex).join() || !verifyConsistency(hasher, m, n, proof, tree.root(m), tree.root(n))) failures.push(`${m}->${n}`);
    }
  }
  expect(failures).toEqual([]);
});

describe('a publisher resuming after a checkpoint older than the head', () => {
  const tmp = sqliteTempDir();
  afterAll(() => tmp.cleanup());
  const key = generateSignerKey(nodeCrypto, 'example.com/ledger');

  /** Registers (or, on a reopened log, re-attaches) the tool, issues a grant, makes `calls` calls. */
  async function drive(ledger: Ledger, calls: number): Promise<void> {
    await ledger.registerTool({ name: 'noop', inputSchema: { type: 'object' }, run: () => null });
    const { token } = await ledger.issue({ tools: ['noop'], expiresAt: Date.now() + 3_600_000, budget: { calls: 1_000, inputBytes: 100_000 } });
    for (let i = 0; i < calls; i++) await ledger.invoke(token, 'noop', {});
  }

  test('proves its next checkpoint consistent with that one from the subtrees it rebuilt on open', async () => {
    const file = tmp.file('resume-tail.sqlite');
    const firstRun: PublishedCheckpoint[] = [];
    const first = createLedger({ store: sqliteStore({ path: file, snapshotEvery: 0 }), transparency: checkpointPublisher({ key, sink: (p) => void firstRun.push(p), everyEvents: 11 }) });
    await drive(first, 20); // 42 events: checkpoints at 11, 22, 33, 42 (close)
    await first.close();
    const old = firstRun[0] as PublishedCheckpoint;
    expect(old.checkpoint.size).toBe(11);

    const secondRun: PublishedCheckpoint[] = [];
    const second = createLedger({
      store: sqliteStore({ path: file, snapshotEvery: 0 }),
      transparency: checkpointPublisher({ key, sink: (p) => void secondRun.push(p), everyEvents: 1_000, checkpoint: old.note }),
    });
    await drive(second, 9); // 1 issue + 18 events: 61
    const size = second.events().length;
    await second.close();
    const next = secondRun.at(-1) as PublishedCheckpoint;
    expect(next.checkpoint.size).toBe(size);
    expect(next.previous?.size).toBe(11);
    expect(next.consistencyProof.length).toBeGreaterThan(0);
    expect(verifyConsistency(hasher, 11, size, next.consistencyProof, old.checkpoint.root, next.checkpoint.root)).toBe(true);
  });
});

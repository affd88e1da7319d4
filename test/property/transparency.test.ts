// Every tree size up to 300: every inclusion proof and every consistency proof (all pairs m ≤ n)
// verifies, checked exhaustively; single-bit changes and the structural corruptions are sampled
// with fast-check (flipping every bit of every proof of the full product would be ~10^9 hashes).
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { CompactFrontier, merkleHasher, MerkleTree, nodeCrypto, verifyConsistency, verifyInclusion } from '../../src/transparency';

const hasher = merkleHasher(nodeCrypto);
const sizeMax = 300;
const tree = new MerkleTree(hasher);
const frontiers: CompactFrontier[] = [];
{
  const frontier = new CompactFrontier(hasher);
  frontiers.push(frontier.copy());
  for (let i = 0; i < sizeMax; i++) {
    const leaf = createHash('sha256').update(`event ${i}`).digest();
    tree.appendLeaf(leaf);
    frontier.appendLeafHash(hasher.leaf(leaf));
    frontiers.push(frontier.copy());
  }
}
const roots = Array.from({ length: sizeMax + 1 }, (_, n) => tree.root(n));

function flip(bytes: Uint8Array, bit: number): Uint8Array {
  const copy = new Uint8Array(bytes); // not .slice(): on a Buffer that is a view
  copy[Math.floor(bit / 8) % copy.length] = (copy[Math.floor(bit / 8) % copy.length] as number) ^ (1 << bit % 8);
  return copy;
}

const sizeAndIndex = fc.integer({ min: 1, max: sizeMax }).chain((n) => fc.tuple(fc.constant(n), fc.integer({ min: 0, max: n - 1 })));
const sizePair = fc.integer({ min: 1, max: sizeMax }).chain((n) => fc.tuple(fc.integer({ min: 1, max: n }), fc.constant(n)));

describe('Merkle proofs, every size up to 300', () => {
  test('the compact frontier gives the same root as the full tree at every size', () => {
    for (let n = 0; n <= sizeMax; n++) expect(Buffer.from((frontiers[n] as CompactFrontier).root()).equals(roots[n] as Uint8Array)).toBe(true);
  });

  test('every inclusion proof of every leaf of every size verifies', () => {
    let failures = 0;
    for (let n = 1; n <= sizeMax; n++) {
      for (let i = 0; i < n; i++) if (!verifyInclusion(hasher, i, n, tree.leafHash(i), tree.inclusionProof(i, n), roots[n] as Uint8Array)) failures++;
    }
    expect(failures).toBe(0);
  });

  test('every consistency proof of every pair 1 ≤ m ≤ n ≤ 300 verifies', () => {
    let failures = 0;
    for (let n = 1; n <= sizeMax; n++) {
      for (let m = 1; m <= n; m++) if (!verifyConsistency(hasher, m, n, tree.consistencyProof(m, n), roots[m] as Uint8Array, roots[n] as Uint8Array)) failures++;
    }
    expect(failures).toBe(0);
  });

  test('flipping any one bit of an inclusion proof, its leaf or its root fails it', () => {
    fc.assert(
      fc.property(sizeAndIndex, fc.nat(), fc.nat({ max: 255 }), ([n, i], which, bit) => {
        const proof = tree.inclusionProof(i, n);
        const leaf = tree.leafHash(i);
        const root = roots[n] as Uint8Array;
        const target = which % (proof.length + 2);
        if (target < proof.length) {
          const changed = proof.slice();
          changed[target] = flip(changed[target] as Uint8Array, bit);
          return !verifyInclusion(hasher, i, n, leaf, changed, root);
        }
        return target === proof.length ? !verifyInclusion(hasher, i, n, flip(leaf, bit), proof, root) : !verifyInclusion(hasher, i, n, leaf, proof, flip(root, bit));
      }),
      { numRuns: 3_000 },
    );
  });

  test('flipping any one bit of a consistency proof or either root fails it', () => {
    fc.assert(
      fc.property(sizePair, fc.nat(), fc.nat({ max: 255 }), ([m, n], which, bit) => {
        const proof = tree.consistencyProof(m, n);
        const [r1, r2] = [roots[m] as Uint8Array, roots[n] as Uint8Array];
        const target = which % (proof.length + 2);
        if (target < proof.length) {
          const changed = proof.slice();
          changed[target] = flip(changed[target] as Uint8Array, bit);
          return !verifyConsistency(hasher, m, n, changed, r1, r2);
        }
        return target === proof.length ? !verifyConsistency(hasher, m, n, proof, flip(r1, bit), r2) : !verifyConsistency(hasher, m, n, proof, r1, flip(r2, bit));
      }),
      { numRuns: 3_000 },
    );
  });

  test('an inclusion proof fails at a neighbouring index, a doubled or halved size, or with an element removed or added', () => {
    fc.assert(
      fc.property(sizeAndIndex, fc.nat(), ([n, i], pick) => {
        const proof = tree.inclusionProof(i, n);
        const leaf = tree.leafHash(i);
        const root = roots[n] as Uint8Array;
        const bad: boolean[] = [];
        for (const j of [i - 1, i + 1]) if (j >= 0 && j < n) bad.push(verifyInclusion(hasher, j, n, leaf, proof, root));
        for (const size of [n * 2, Math.floor(n / 2)]) if (size !== n) bad.push(verifyInclusion(hasher, i, size, leaf, proof, root));
        if (proof.length > 0) bad.push(verifyInclusion(hasher, i, n, leaf, proof.filter((_, k) => k !== pick % proof.length), root));
        bad.push(verifyInclusion(hasher, i, n, leaf, [...proof.slice(0, pick % (proof.length + 1)), leaf, ...proof.slice(pick % (proof.length + 1))], root));
        return bad.every((accepted) => !accepted);
      }),
      { numRuns: 2_000 },
    );
  });

  test('a consistency proof fails with the first size off by one or XOR 2, the second doubled or halved, roots swapped, or an element removed or added', () => {
    fc.assert(
      fc.property(sizePair.filter(([m, n]) => m < n), fc.nat(), ([m, n], pick) => {
        const proof = tree.consistencyProof(m, n);
        const [r1, r2] = [roots[m] as Uint8Array, roots[n] as Uint8Array];
        const bad: boolean[] = [];
        // transparency-dev's size mutations. Not n ± 1: a proof may verify for n + 1 when the last
        // element could be the root of the last two leaves (no such tree exists; that is a preimage).
        for (const [a, b] of [[m - 1, n], [m + 1, n], [m ^ 2, n], [m, n * 2], [m, Math.floor(n / 2)]] as const) {
          if ((a !== m || b !== n) && a >= 1 && a <= b) bad.push(verifyConsistency(hasher, a, b, proof, r1, r2));
        }
        bad.push(verifyConsistency(hasher, m, n, proof, r2, r1));
        bad.push(verifyConsistency(hasher, m, n, proof.filter((_, k) => k !== pick % proof.length), r1, r2));
        bad.push(verifyConsistency(hasher, m, n, [...proof, r1], r1, r2));
        bad.push(verifyConsistency(hasher, m, n, [r2, ...proof], r1, r2));
        return bad.every((accepted) => !accepted);
      }),
      { numRuns: 3_000 },
    );
  });
});

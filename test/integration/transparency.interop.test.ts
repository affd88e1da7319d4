// Interop: a second implementation of RFC 9162 §2.1, written here straight from the RFC's recursive
// definitions (MTH, PATH, PROOF/SUBPROOF) over arrays of leaf inputs, with node:crypto directly and
// none of src/transparency. Our roots and proofs must equal its output byte for byte.
import { createHash } from 'node:crypto';
import { merkleHasher, MerkleTree, nodeCrypto, verifyConsistency, verifyInclusion } from '../../src/transparency';

const sha = (...parts: Buffer[]): Buffer => createHash('sha256').update(Buffer.concat(parts)).digest();

/** MTH({}) = SHA-256(); MTH({d0}) = SHA-256(0x00 || d0); MTH(D[n]) = SHA-256(0x01 || MTH(D[0:k]) || MTH(D[k:n])). */
function mth(d: readonly Buffer[]): Buffer {
  if (d.length === 0) return sha();
  if (d.length === 1) return sha(Buffer.from([0]), d[0] as Buffer);
  const k = largestPowerOfTwoBelow(d.length);
  return sha(Buffer.from([1]), mth(d.slice(0, k)), mth(d.slice(k)));
}

/** k: the largest power of two smaller than n (n > 1). */
function largestPowerOfTwoBelow(n: number): number {
  let k = 1;
  while (k < n) k <<= 1;
  return k >> 1;
}

/** PATH(m, {d0}) = {}; PATH(m, D[n]) = PATH(m, D[0:k]) : MTH(D[k:n]) if m < k, else PATH(m − k, D[k:n]) : MTH(D[0:k]). */
function pathOf(m: number, d: readonly Buffer[]): Buffer[] {
  if (d.length === 1) return [];
  const k = largestPowerOfTwoBelow(d.length);
  return m < k ? [...pathOf(m, d.slice(0, k)), mth(d.slice(k))] : [...pathOf(m - k, d.slice(k)), mth(d.slice(0, k))];
}

/** PROOF(m, D[n]) = SUBPROOF(m, D[n], true). */
function proofOf(m: number, d: readonly Buffer[]): Buffer[] {
  return subproof(m, d, true);
}

function subproof(m: number, d: readonly Buffer[], b: boolean): Buffer[] {
  if (m === d.length) return b ? [] : [mth(d)];
  const k = largestPowerOfTwoBelow(d.length);
  return m <= k ? [...subproof(m, d.slice(0, k), b), mth(d.slice(k))] : [...subproof(m - k, d.slice(k), false), mth(d.slice(0, k))];
}

const hasher = merkleHasher(nodeCrypto);
const hex = (bytes: readonly Uint8Array[]): string[] => bytes.map((b) => Buffer.from(b).toString('hex'));

/** Leaf inputs of varied lengths (the ledger's are 32 bytes; the RFC allows any). */
function leaves(n: number): Buffer[] {
  return Array.from({ length: n }, (_, i) => sha(Buffer.from(`leaf ${i}`)).subarray(0, i % 5 === 0 ? 32 : (i * 7) % 33));
}

function ourTree(d: readonly Buffer[]): MerkleTree {
  const tree = new MerkleTree(hasher);
  for (const leaf of d) tree.appendLeaf(leaf);
  return tree;
}

describe('interop with an RFC 9162 reference written from the RFC text', () => {
  const sizeMax = 64;
  const d = leaves(300);
  const tree = ourTree(d);

  test(`roots agree for every size up to 300`, () => {
    for (let n = 0; n <= 300; n++) expect(Buffer.from(tree.root(n)).toString('hex')).toBe(mth(d.slice(0, n)).toString('hex'));
  });

  test(`inclusion proofs agree for every leaf of every size up to ${sizeMax}`, () => {
    for (let n = 1; n <= sizeMax; n++) {
      for (let m = 0; m < n; m++) expect(hex(tree.inclusionProof(m, n))).toEqual(hex(pathOf(m, d.slice(0, n))));
    }
  });

  test(`consistency proofs agree for every pair 0 < m ≤ n ≤ ${sizeMax}`, () => {
    for (let n = 1; n <= sizeMax; n++) {
      for (let m = 1; m <= n; m++) expect(hex(tree.consistencyProof(m, n))).toEqual(hex(proofOf(m, d.slice(0, n))));
    }
  });

  test('proofs agree on sampled sizes up to 300, and the reference proofs verify with our verifier', () => {
    for (const n of [65, 100, 127, 128, 129, 200, 255, 256, 257, 299, 300]) {
      const prefix = d.slice(0, n);
      const root = mth(prefix);
      for (const m of [1, 2, 3, Math.floor(n / 2), n - 2, n - 1]) {
        expect(hex(tree.inclusionProof(m, n))).toEqual(hex(pathOf(m, prefix)));
        expect(verifyInclusion(hasher, m, n, sha(Buffer.from([0]), prefix[m] as Buffer), pathOf(m, prefix), root)).toBe(true);
        expect(hex(tree.consistencyProof(m, n))).toEqual(hex(proofOf(m, prefix)));
        expect(verifyConsistency(hasher, m, n, proofOf(m, prefix), mth(d.slice(0, m)), root)).toBe(true);
      }
    }
  });
});

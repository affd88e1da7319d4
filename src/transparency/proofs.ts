import { equalBytes } from './bytes';
import { hashBytes, splitPoint, type MerkleHasher } from './merkleHasher';

/**
 * MTH(D[start:end]) for a range of the tree: a Merkle tree, a compact frontier or a list of leaves
 * answers it. Proof generation asks only for the ranges the RFC 9162 recursion visits.
 */
export type RangeRoot = (start: number, end: number) => Uint8Array;

/** Proof sizes are bounded by the tree's height: sizes are safe integers, below 2^53. */
export const proofHashesMax = 64;

function isSize(n: number): boolean {
  return Number.isSafeInteger(n) && n >= 0;
}

/** RFC 9162 §2.1.3.1 PATH(index, D[size]): the inclusion proof of leaf `index` in the tree of `size` leaves. */
export function inclusionProof(index: number, size: number, rangeRoot: RangeRoot): Uint8Array[] {
  if (!isSize(size) || !isSize(index) || index >= size) throw new RangeError(`no leaf ${index} in a tree of ${size}`);
  const path: Uint8Array[] = [];
  let start = 0;
  let n = size;
  let m = index;
  // Walk down; each level's sibling goes in front (the proof lists siblings from the leaf up).
  while (n > 1) {
    const k = splitPoint(n);
    if (m < k) {
      path.push(rangeRoot(start + k, start + n));
      n = k;
    } else {
      path.push(rangeRoot(start, start + k));
      start += k;
      m -= k;
      n -= k;
    }
  }
  return path.reverse();
}

/** RFC 9162 §2.1.4.1 PROOF(first, D[second]): the consistency proof between two sizes of one tree. */
export function consistencyProof(first: number, second: number, rangeRoot: RangeRoot): Uint8Array[] {
  if (!isSize(first) || !isSize(second) || first > second) throw new RangeError(`no consistency proof from ${first} to ${second}`);
  if (first === 0 || first === second) return [];
  const proof: Uint8Array[] = [];
  let start = 0;
  let n = second;
  let m = first;
  let whole = true; // SUBPROOF's b: whether D[0:m] here is the whole first tree (its root is known)
  while (m !== n) {
    const k = splitPoint(n);
    if (m <= k) {
      proof.push(rangeRoot(start + k, start + n));
      n = k;
    } else {
      proof.push(rangeRoot(start, start + k));
      start += k;
      m -= k;
      n -= k;
      whole = false;
    }
  }
  if (!whole) proof.push(rangeRoot(start, start + m));
  return proof.reverse();
}

function validHashes(hashes: readonly Uint8Array[]): boolean {
  return hashes.length <= proofHashesMax && hashes.every((h) => h instanceof Uint8Array && h.length === hashBytes);
}

/** The root an inclusion proof leads to, or undefined when the proof cannot be one for (index, size). */
export function rootFromInclusionProof(hasher: MerkleHasher, index: number, size: number, leafHash: Uint8Array, proof: readonly Uint8Array[]): Uint8Array | undefined {
  if (!isSize(index) || !isSize(size) || index >= size || leafHash.length !== hashBytes || !validHashes(proof)) return undefined;
  // RFC 9162 §2.1.3.2, with halving instead of bit shifts (sizes beyond 2^31 stay exact).
  let fn = index;
  let sn = size - 1;
  let r = leafHash;
  for (const p of proof) {
    if (sn === 0) return undefined;
    if (fn % 2 === 1 || fn === sn) {
      r = hasher.node(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn /= 2;
        sn = Math.floor(sn / 2);
      }
    } else r = hasher.node(r, p);
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? r : undefined;
}

/** Whether `proof` shows the leaf with `leafHash` at `index` in the tree of `size` leaves with `root`. */
export function verifyInclusion(hasher: MerkleHasher, index: number, size: number, leafHash: Uint8Array, proof: readonly Uint8Array[], root: Uint8Array): boolean {
  const computed = rootFromInclusionProof(hasher, index, size, leafHash, proof);
  return computed !== undefined && root.length === hashBytes && equalBytes(computed, root);
}

/** Whether `proof` shows the tree of `second` leaves with `secondRoot` extends the one of `first` with `firstRoot`. */
export function verifyConsistency(hasher: MerkleHasher, first: number, second: number, proof: readonly Uint8Array[], firstRoot: Uint8Array, secondRoot: Uint8Array): boolean {
  if (!isSize(first) || !isSize(second) || first > second || !validHashes(proof)) return false;
  // An empty tree is a prefix of every tree: there is nothing to prove, and no proof has a form
  // (transparency-dev refuses size 0 too, even against itself).
  if (first === 0) return false;
  // Equal sizes: nothing to prove but that the roots are equal (as transparency-dev's vectors expect).
  if (first === second) return proof.length === 0 && equalBytes(firstRoot, secondRoot);
  if (firstRoot.length !== hashBytes || secondRoot.length !== hashBytes) return false;
  if (proof.length === 0) return false;
  // RFC 9162 §2.1.4.2.
  const path = isPowerOfTwo(first) ? [firstRoot, ...proof] : [...proof];
  let fn = first - 1;
  let sn = second - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0] as Uint8Array;
  let sr = path[0] as Uint8Array;
  for (let i = 1; i < path.length; i++) {
    const c = path[i] as Uint8Array;
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = hasher.node(c, fr);
      sr = hasher.node(c, sr);
      while (fn % 2 === 0 && fn !== 0) {
        fn /= 2;
        sn = Math.floor(sn / 2);
      }
    } else sr = hasher.node(sr, c);
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && equalBytes(fr, firstRoot) && equalBytes(sr, secondRoot);
}

function isPowerOfTwo(n: number): boolean {
  let k = 1;
  while (k < n) k *= 2;
  return k === n;
}

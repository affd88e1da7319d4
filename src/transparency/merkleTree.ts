import { hashBytes, rangeRootOfLeaves, type MerkleHasher } from './merkleHasher';
import { HashArray } from './hashArray';
import { consistencyProof, inclusionProof } from './proofs';

/**
 * An append-only RFC 9162 Merkle tree that keeps every perfect subtree's root (level by level, about
 * 64 bytes per leaf), so roots of any earlier size, inclusion proofs and consistency proofs take
 * O(log n) stored nodes and at most O(log n) hashes. Appending costs amortized two hashes.
 */
export class MerkleTree {
  /** levels[l][i] = root of leaves [i·2^l, (i+1)·2^l). */
  private readonly levels: HashArray[] = [new HashArray()];

  constructor(private readonly hasher: MerkleHasher) {}

  get size(): number {
    return (this.levels[0] as HashArray).length;
  }

  appendLeaf(data: Uint8Array): void {
    this.appendLeafHash(this.hasher.leaf(data));
  }

  appendLeafHash(leafHash: Uint8Array): void {
    if (leafHash.length !== hashBytes) throw new RangeError('a leaf hash has 32 bytes');
    (this.levels[0] as HashArray).push(leafHash);
    for (let level = 0, i = this.size - 1; i % 2 === 1; level++, i = Math.floor(i / 2)) {
      const nodes = this.levels[level] as HashArray;
      if (this.levels[level + 1] === undefined) this.levels.push(new HashArray());
      (this.levels[level + 1] as HashArray).push(this.hasher.node(nodes.at(i - 1), nodes.at(i)));
    }
  }

  leafHash(index: number): Uint8Array {
    if (!Number.isSafeInteger(index) || index < 0 || index >= this.size) throw new RangeError(`no leaf ${index} in a tree of ${this.size}`);
    return new Uint8Array((this.levels[0] as HashArray).at(index));
  }

  /** MTH(D[start:end]) (end ≤ size): stored perfect subtrees folded right to left. */
  rangeRoot(start: number, end: number): Uint8Array {
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || start > end || end > this.size) throw new RangeError(`no range [${start}, ${end}) in a tree of ${this.size}`);
    if (start === end) return this.hasher.emptyRoot;
    const pieces: Uint8Array[] = [];
    let at = start;
    let expected = 0;
    while (at < end) {
      // The largest aligned perfect subtree starting at `at` that fits.
      let level = 0;
      let width = 1;
      while (at % (width * 2) === 0 && at + width * 2 <= end) {
        level++;
        width *= 2;
      }
      // The RFC tree over [start, end) is this right fold only when the pieces shrink left to right.
      if (expected !== 0 && width >= expected) return rangeRootOfLeaves(this.hasher, (i) => (this.levels[0] as HashArray).at(i), start, end);
      expected = width;
      pieces.push((this.levels[level] as HashArray).at(at / width));
      at += width;
    }
    let root = pieces[pieces.length - 1] as Uint8Array;
    for (let i = pieces.length - 2; i >= 0; i--) root = this.hasher.node(pieces[i] as Uint8Array, root);
    return new Uint8Array(root);
  }

  /** The root of the tree of its first `size` leaves (default: all of them). */
  root(size = this.size): Uint8Array {
    return this.rangeRoot(0, size);
  }

  inclusionProof(index: number, size = this.size): Uint8Array[] {
    if (size > this.size) throw new RangeError(`the tree has ${this.size} leaves, not ${size}`);
    return inclusionProof(index, size, (s, e) => this.rangeRoot(s, e));
  }

  consistencyProof(first: number, second = this.size): Uint8Array[] {
    if (second > this.size) throw new RangeError(`the tree has ${this.size} leaves, not ${second}`);
    return consistencyProof(first, second, (s, e) => this.rangeRoot(s, e));
  }
}

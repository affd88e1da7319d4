import { HashArray } from './hashArray';
import { rangeRootOfLeaves, type MerkleHasher } from './merkleHasher';

/**
 * The perfect subtrees of a growing tree (aligned as in the whole tree) that lie at or after leaf
 * `from`, recorded as a CompactFrontier creates them (its `onNode`): no hash of its own. So a
 * consistency proof from the tree of size `from` to the current size finds every range it needs
 * after `from` stored or folded from O(log n) stored roots, instead of re-hashing the leaves
 * appended since (which doubled the tree's hashing per event). About 64 bytes per leaf.
 */
export class SubtreesSince {
  /** levels[h][j] = root of the j-th recorded subtree of height h, which starts at (base_h + j)·2^h. */
  private readonly levels: HashArray[] = [];
  private leaves: number;

  constructor(
    private readonly hasher: MerkleHasher,
    readonly from: number,
  ) {
    this.leaves = from;
  }

  /** Leaves seen: the tree's size. */
  get size(): number {
    return this.leaves;
  }

  /** The `onNode` of CompactFrontier.appendLeafHash, for the tree this follows. */
  readonly record = (height: number, hash: Uint8Array): void => {
    if (height === 0) this.leaves++;
    const width = 2 ** height;
    if (this.leaves - width < this.from) return; // starts before `from`: not needed
    let level = this.levels[height];
    if (level === undefined) this.levels[height] = level = new HashArray();
    level.push(hash);
  };

  /** MTH(D[start:end]) for from ≤ start < end ≤ size. */
  rangeRoot(start: number, end: number): Uint8Array {
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < this.from || start >= end || end > this.leaves) {
      throw new RangeError(`no range [${start}, ${end}) after leaf ${this.from} in a tree of ${this.leaves}`);
    }
    // The largest aligned perfect subtrees, left to right; the RFC tree over the range is their right
    // fold exactly when they shrink left to right (always so for the ranges a proof asks for).
    const pieces: Uint8Array[] = [];
    let previousWidth = Infinity;
    for (let at = start; at < end; ) {
      let height = 0;
      let width = 1;
      while (at % (width * 2) === 0 && at + width * 2 <= end) {
        height++;
        width *= 2;
      }
      if (width >= previousWidth) return rangeRootOfLeaves(this.hasher, (i) => this.stored(0, i), start, end);
      previousWidth = width;
      pieces.push(this.stored(height, at));
      at += width;
    }
    let root = pieces[pieces.length - 1] as Uint8Array;
    for (let i = pieces.length - 2; i >= 0; i--) root = this.hasher.node(pieces[i] as Uint8Array, root);
    return new Uint8Array(root);
  }

  private stored(height: number, start: number): Uint8Array {
    const width = 2 ** height;
    const first = Math.ceil(this.from / width);
    return (this.levels[height] as HashArray).at(start / width - first);
  }
}

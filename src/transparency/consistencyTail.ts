import type { CompactFrontier, FrontierNodeObserver } from './compactFrontier';
import { hashBytes, type MerkleHasher } from './merkleHasher';

/**
 * What a consistency proof from the tree of size `from` (m) to a later size n needs besides the
 * frontier at m, kept in O(log n) hashes while the head frontier grows. RFC 9162 §2.1.4.1's
 * PROOF(m, D[n]) asks for three kinds of range: perfect subtrees inside [0, m) (the frontier at m
 * has them); ranges [k, n) ending at the head, with k a boundary of the head's own frontier (folded
 * from it); and the perfect subtrees right of the boundary at m whose left sibling holds leaf
 * m − 1 (the right siblings on leaf m − 1's path). The last are merged away as the tree grows, so
 * they are recorded here as the head frontier's appends create them (`record`, its `onNode`): the
 * one subtree per height h that starts at the first multiple of 2^h at or after m. Nothing else is
 * kept, so the tail costs no memory per event and a checkpoint can be any number of events away.
 */
export class ConsistencyTail {
  /** siblings[h]: the root of [s_h, s_h + 2^h), s_h = the first multiple of 2^h ≥ from, once created. */
  private readonly siblings: (Uint8Array | undefined)[] = [];
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

  /** The `onNode` of CompactFrontier.appendLeaf, for the tree this follows. */
  readonly record: FrontierNodeObserver = (height, nodes, at) => {
    if (height === 0) this.leaves++;
    const width = 2 ** height;
    const start = this.leaves - width;
    if (start < this.from || start - width >= this.from) return;
    let kept = this.siblings[height];
    if (kept === undefined) this.siblings[height] = kept = new Uint8Array(hashBytes);
    for (let i = 0; i < hashBytes; i++) kept[i] = nodes[at + i] as number;
  };

  /**
   * MTH(D[start:end]) for a range after `from` that a consistency proof from `from` to the head's
   * size asks for; a RangeError for any other range (never a wrong root).
   */
  rangeRoot(start: number, end: number, head: CompactFrontier): Uint8Array {
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < this.from || start >= end || end > this.leaves || head.size !== this.leaves) {
      throw new RangeError(`no range [${start}, ${end}) after leaf ${this.from} in a tree of ${this.leaves}`);
    }
    const width = end - start;
    const height = Math.round(Math.log2(width));
    if (2 ** height === width && start === Math.ceil(this.from / width) * width) {
      const sibling = this.siblings[height];
      if (sibling !== undefined) return sibling.slice();
    }
    if (end === head.size) {
      const ranges = head.ranges();
      const first = ranges.findIndex((r) => r.start === start);
      if (first >= 0) {
        let root = (ranges[ranges.length - 1] as { root: Uint8Array }).root;
        for (let i = ranges.length - 2; i >= first; i--) root = this.hasher.node((ranges[i] as { root: Uint8Array }).root, root);
        return root;
      }
    }
    throw new RangeError(`[${start}, ${end}) is not a range a consistency proof from ${this.from} to ${this.leaves} asks for`);
  }
}

import { fromBase64, toBase64 } from './bytes';
import { hashBytes, type MerkleHasher } from './merkleHasher';

/** The frontier as text (JSON), e.g. to keep with a snapshot. */
export interface FrontierJson {
  readonly size: number;
  /** Base64 roots of the perfect subtrees covering [0, size), largest (leftmost) first. */
  readonly nodes: readonly string[];
}

/** Nodes a frontier holds at most: one per set bit of a safe-integer size. */
const frontierNodesMax = 53;

/** What a frontier reports for every perfect subtree an append creates (see appendLeaf). */
export type FrontierNodeObserver = (height: number, nodes: Uint8Array, at: number) => void;

/**
 * The compact frontier of an append-only Merkle tree: the roots of the perfect subtrees that cover
 * its leaves, one per set bit of the size (at most 53). Appending a leaf costs one node hash per
 * trailing one bit of the old size (amortized one, at most log2 n); the root folds them right to left.
 * The nodes live in one buffer, hashed in place: an append allocates nothing.
 */
export class CompactFrontier {
  /** Node i (the largest, leftmost subtree first) at bytes [32·i, 32·i + 32), and a slot for the new leaf. */
  private readonly store = new Uint8Array((frontierNodesMax + 1) * hashBytes);
  private depth: number;
  private count: number;

  constructor(
    private readonly hasher: MerkleHasher,
    start?: { readonly size: number; readonly nodes: readonly Uint8Array[] },
  ) {
    this.count = start?.size ?? 0;
    const nodes = start?.nodes ?? [];
    if (!Number.isSafeInteger(this.count) || this.count < 0 || nodes.length !== bitCount(this.count) || nodes.some((n) => n.length !== hashBytes)) {
      throw new RangeError('a frontier needs one 32-byte node per set bit of its size');
    }
    this.depth = nodes.length;
    nodes.forEach((node, i) => this.store.set(node, i * hashBytes));
  }

  get size(): number {
    return this.count;
  }

  /**
   * Appends one leaf by its leaf hash (H(0x00 ‖ leaf)). `onNode`, when given, sees every perfect
   * subtree this creates: the leaf itself (height 0), then each merge, by height; the subtree of
   * height h ends at the new size and starts 2^h leaves before it. Its `hash` is a view into the
   * frontier, valid during the call only: copy it to keep it.
   */
  appendLeafHash(leafHash: Uint8Array, onNode?: (height: number, hash: Uint8Array) => void): void {
    if (leafHash.length !== hashBytes) throw new RangeError('a leaf hash has 32 bytes');
    this.store.set(leafHash, this.depth * hashBytes);
    this.merge(onNode === undefined ? undefined : (height, nodes, at) => onNode(height, nodes.subarray(at, at + hashBytes)));
  }

  /**
   * Appends one leaf by its 32 bytes of data, hashing it (and every merge) in place: the tree's hot
   * path. `onNode` as in appendLeafHash, with the subtree's root at `nodes[at … at + 32)` (valid
   * during the call only).
   */
  appendLeaf(leaf: Uint8Array, onNode?: FrontierNodeObserver): void {
    this.hasher.leafInto(leaf, this.store, this.depth * hashBytes);
    this.merge(onNode);
  }

  /** The new leaf's hash is in the slot after the last node: merge it with every subtree of its size. */
  private merge(onNode: FrontierNodeObserver | undefined): void {
    if (this.count === Number.MAX_SAFE_INTEGER) throw new RangeError('a frontier holds fewer than 2^53 leaves');
    let top = this.depth;
    onNode?.(0, this.store, top * hashBytes);
    let height = 0;
    // One merge per trailing one bit of the old size (no 32-bit bitwise operators: sizes pass 2^31).
    for (let n = this.count; n % 2 === 1; n = Math.floor(n / 2)) {
      top--;
      this.hasher.nodeInto(this.store, top * hashBytes, (top + 1) * hashBytes, top * hashBytes);
      onNode?.(++height, this.store, top * hashBytes);
    }
    this.depth = top + 1;
    this.count++;
  }

  /** The RFC 9162 root of the tree of `size` leaves (the empty tree's root for size 0). */
  root(): Uint8Array {
    if (this.depth === 0) return this.hasher.emptyRoot;
    let root: Uint8Array = this.node(this.depth - 1).slice();
    for (let i = this.depth - 2; i >= 0; i--) root = this.hasher.node(this.node(i), root);
    return root;
  }

  /** The perfect subtrees as ranges: [start, end) and their root (a copy), left to right. */
  ranges(): { readonly start: number; readonly end: number; readonly root: Uint8Array }[] {
    const out: { start: number; end: number; root: Uint8Array }[] = [];
    let start = 0;
    let i = 0;
    for (let bit = highestPowerOfTwo(this.count); bit >= 1; bit /= 2) {
      if (Math.floor(this.count / bit) % 2 === 1) {
        out.push({ start, end: start + bit, root: this.node(i++).slice() });
        start += bit;
      }
    }
    return out;
  }

  /** Node i, a view (valid until the next append). */
  private node(i: number): Uint8Array {
    return this.store.subarray(i * hashBytes, (i + 1) * hashBytes);
  }

  private nodes(): Uint8Array[] {
    return Array.from({ length: this.depth }, (_, i) => this.node(i));
  }

  copy(): CompactFrontier {
    return new CompactFrontier(this.hasher, { size: this.count, nodes: this.nodes() });
  }

  toJson(): FrontierJson {
    return { size: this.count, nodes: this.nodes().map(toBase64) };
  }

  /** Undefined for anything that is not a well-formed frontier (the text is a cache, never trusted to parse). */
  static fromJson(hasher: MerkleHasher, value: unknown): CompactFrontier | undefined {
    if (value === null || typeof value !== 'object') return undefined;
    const { size, nodes } = value as { size?: unknown; nodes?: unknown };
    if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0 || !Array.isArray(nodes) || nodes.length !== bitCount(size)) return undefined;
    const decoded: Uint8Array[] = [];
    for (const node of nodes) {
      const bytes = typeof node === 'string' ? fromBase64(node) : undefined;
      if (bytes === undefined || bytes.length !== hashBytes) return undefined;
      decoded.push(bytes);
    }
    return new CompactFrontier(hasher, { size, nodes: decoded });
  }
}

export function bitCount(n: number): number {
  let count = 0;
  for (let x = n; x > 0; x = Math.floor(x / 2)) count += x % 2;
  return count;
}

function highestPowerOfTwo(n: number): number {
  let k = 1;
  while (k * 2 <= n) k *= 2;
  return k;
}

import { fromBase64, toBase64 } from './bytes';
import { hashBytes, type MerkleHasher } from './merkleHasher';

/** The frontier as text (JSON), e.g. to keep with a snapshot. */
export interface FrontierJson {
  readonly size: number;
  /** Base64 roots of the perfect subtrees covering [0, size), largest (leftmost) first. */
  readonly nodes: readonly string[];
}

/**
 * The compact frontier of an append-only Merkle tree: the roots of the perfect subtrees that cover
 * its leaves, one per set bit of the size (at most 53). Appending a leaf costs one node hash per
 * trailing one bit of the old size (amortized one, at most log2 n); the root folds them right to left.
 */
export class CompactFrontier {
  private readonly nodes: Uint8Array[];
  private count: number;

  constructor(
    private readonly hasher: MerkleHasher,
    start?: { readonly size: number; readonly nodes: readonly Uint8Array[] },
  ) {
    this.count = start?.size ?? 0;
    this.nodes = start === undefined ? [] : start.nodes.slice();
    if (!Number.isSafeInteger(this.count) || this.count < 0 || this.nodes.length !== bitCount(this.count) || this.nodes.some((n) => n.length !== hashBytes)) {
      throw new RangeError('a frontier needs one 32-byte node per set bit of its size');
    }
  }

  get size(): number {
    return this.count;
  }

  /**
   * Appends one leaf by its leaf hash (H(0x00 ‖ leaf)). `onNode`, when given, sees every perfect
   * subtree this creates: the leaf itself (height 0), then each merge, by height; the subtree of
   * height h ends at the new size and starts 2^h leaves before it.
   */
  appendLeafHash(leafHash: Uint8Array, onNode?: (height: number, hash: Uint8Array) => void): void {
    let hash = leafHash;
    let height = 0;
    onNode?.(0, hash);
    // Merge with every perfect subtree of the same size: one per trailing one bit of the old size.
    for (let n = this.count; n % 2 === 1; n = Math.floor(n / 2)) {
      hash = this.hasher.node(this.nodes.pop() as Uint8Array, hash);
      onNode?.(++height, hash);
    }
    this.nodes.push(hash);
    this.count++;
  }

  /** The RFC 9162 root of the tree of `size` leaves (the empty tree's root for size 0). */
  root(): Uint8Array {
    if (this.nodes.length === 0) return this.hasher.emptyRoot;
    let root = this.nodes[this.nodes.length - 1] as Uint8Array;
    for (let i = this.nodes.length - 2; i >= 0; i--) root = this.hasher.node(this.nodes[i] as Uint8Array, root);
    return root;
  }

  /** The perfect subtrees as ranges: [start, end) and their root, left to right. */
  ranges(): { readonly start: number; readonly end: number; readonly root: Uint8Array }[] {
    const out: { start: number; end: number; root: Uint8Array }[] = [];
    let start = 0;
    let i = 0;
    for (let bit = highestPowerOfTwo(this.count); bit >= 1; bit /= 2) {
      if (Math.floor(this.count / bit) % 2 === 1) {
        out.push({ start, end: start + bit, root: this.nodes[i++] as Uint8Array });
        start += bit;
      }
    }
    return out;
  }

  copy(): CompactFrontier {
    return new CompactFrontier(this.hasher, { size: this.count, nodes: this.nodes });
  }

  toJson(): FrontierJson {
    return { size: this.count, nodes: this.nodes.map(toBase64) };
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

import type { TransparencyCrypto } from './crypto';

/** RFC 9162 §2.1.1 hashing: leaf = H(0x00 ‖ leaf), node = H(0x01 ‖ left ‖ right), empty = H(""). */
export interface MerkleHasher {
  leaf(data: Uint8Array): Uint8Array;
  node(left: Uint8Array, right: Uint8Array): Uint8Array;
  /** The leaf hash of 32 bytes of data written to `out[at …)`: no allocation (the tree's hot path). */
  leafInto(data: Uint8Array, out: Uint8Array, at: number): void;
  /** The node hash of the 32-byte children at `nodes[left …)` and `nodes[right …)`, written to `nodes[at …)`. */
  nodeInto(nodes: Uint8Array, left: number, right: number, at: number): void;
  readonly emptyRoot: Uint8Array;
}

export const hashBytes = 32;

/**
 * A hasher over `crypto.sha256` (two scratch buffers: no input allocated per node of 32-byte
 * children); `leafInto`/`nodeInto` write through `crypto.sha256Into` when it has one.
 */
export function merkleHasher(crypto: Pick<TransparencyCrypto, 'sha256' | 'sha256Into'>): MerkleHasher {
  const nodeScratch = new Uint8Array(1 + 2 * hashBytes);
  nodeScratch[0] = 1;
  const leaf32Scratch = new Uint8Array(1 + hashBytes);
  const sha256Into = crypto.sha256Into?.bind(crypto) ?? ((data: Uint8Array, out: Uint8Array, at: number) => out.set(crypto.sha256(data), at));
  return {
    leaf(data) {
      const input = data.length === hashBytes ? leaf32Scratch : new Uint8Array(1 + data.length);
      input[0] = 0;
      input.set(data, 1);
      return crypto.sha256(input);
    },
    node(left, right) {
      if (left.length === hashBytes && right.length === hashBytes) {
        nodeScratch.set(left, 1);
        nodeScratch.set(right, 1 + hashBytes);
        return crypto.sha256(nodeScratch);
      }
      const input = new Uint8Array(1 + left.length + right.length);
      input[0] = 1;
      input.set(left, 1);
      input.set(right, 1 + left.length);
      return crypto.sha256(input);
    },
    leafInto(data, out, at) {
      if (data.length !== hashBytes) throw new RangeError('leafInto takes 32 bytes of leaf data');
      leaf32Scratch[0] = 0;
      leaf32Scratch.set(data, 1);
      sha256Into(leaf32Scratch, out, at);
    },
    nodeInto(nodes, left, right, at) {
      // A frontier's two children are adjacent: one view and one copy (faster than byte loops).
      if (right === left + hashBytes) nodeScratch.set(nodes.subarray(left, left + 2 * hashBytes), 1);
      else {
        nodeScratch.set(nodes.subarray(left, left + hashBytes), 1);
        nodeScratch.set(nodes.subarray(right, right + hashBytes), 1 + hashBytes);
      }
      sha256Into(nodeScratch, nodes, at);
    },
    emptyRoot: crypto.sha256(new Uint8Array(0)),
  };
}

/** The largest power of two strictly below `n` (n ≥ 2), without 32-bit bitwise operators. */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** MTH(D[start:end]) over leaf hashes, by the RFC 9162 §2.1.1 recursion (O(end − start) hashes). */
export function rangeRootOfLeaves(hasher: MerkleHasher, leafHashes: readonly Uint8Array[] | ((i: number) => Uint8Array), start: number, end: number): Uint8Array {
  const leafAt = typeof leafHashes === 'function' ? leafHashes : (i: number) => leafHashes[i] as Uint8Array;
  if (end === start) return hasher.emptyRoot;
  // Bottom-up over the range, folding a stack of perfect subtrees: the same tree as the recursion
  // (its left subtrees are perfect and as large as possible), without recursion depth.
  const stack: Uint8Array[] = [];
  const sizes: number[] = [];
  for (let i = start; i < end; i++) {
    let hash = leafAt(i);
    let size = 1;
    while (sizes.length > 0 && sizes[sizes.length - 1] === size) {
      hash = hasher.node(stack.pop() as Uint8Array, hash);
      sizes.pop();
      size *= 2;
    }
    stack.push(hash);
    sizes.push(size);
  }
  let root = stack.pop() as Uint8Array;
  while (stack.length > 0) root = hasher.node(stack.pop() as Uint8Array, root);
  return root;
}

import { fromHex, fromHexInto } from './bytes';
import type { MerkleHasher } from './merkleHasher';
import { CompactFrontier } from './compactFrontier';

// The ledger's tree: leaf i (0-based, = seq − 1) is the 32 bytes of event i's `hash` (hex-decoded).

/** The leaf of an event: its hex `hash` as 32 bytes; throws on anything else (a log that does not verify). */
export function eventLeaf(hashHex: string): Uint8Array {
  const bytes = typeof hashHex === 'string' && hashHex.length === 64 ? fromHex(hashHex) : undefined;
  if (bytes === undefined) throw new TypeError('an event hash is 64 lower-case hex digits');
  return bytes;
}

/** eventLeaf into `out` (32 bytes, reused by the caller: no allocation per event); returns `out`. */
export function eventLeafInto(hashHex: string, out: Uint8Array): Uint8Array {
  if (typeof hashHex !== 'string' || hashHex.length !== 64 || !fromHexInto(hashHex, out)) throw new TypeError('an event hash is 64 lower-case hex digits');
  return out;
}

/** The tree root of a log given its events' hashes in order (the empty log's root is SHA-256 of nothing). */
export function rootOfEventHashes(hasher: MerkleHasher, hashes: Iterable<string>): { readonly size: number; readonly root: Uint8Array } {
  const frontier = new CompactFrontier(hasher);
  for (const hash of hashes) frontier.appendLeafHash(hasher.leaf(eventLeaf(hash)));
  return { size: frontier.size, root: frontier.root() };
}

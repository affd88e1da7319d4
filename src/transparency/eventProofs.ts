import { equalBytes, toHex } from './bytes';
import { parseCheckpointBody, verifyCheckpoint, type Checkpoint } from './checkpoint';
import type { TransparencyCrypto } from './crypto';
import { eventLeaf } from './eventLeaves';
import { hashBytes, merkleHasher } from './merkleHasher';
import { CompactFrontier } from './compactFrontier';
import { MerkleTree } from './merkleTree';
import type { VerifierKey } from './noteKeys';
import { verifyInclusion } from './proofs';
import { parseNote } from './signedNote';
import { formatTlogProof, parseTlogProof } from './tlogProof';

// Proofs about one event of the ledger's log: leaf = the event's 32-byte hash, index = seq − 1.

export type ProveEventResult =
  | { readonly ok: true; readonly proof: string; readonly checkpoint: Checkpoint }
  | { readonly ok: false; readonly code: 'not_a_checkpoint' | 'checkpoint_larger_than_log' | 'seq_out_of_range' | 'checkpoint_mismatch'; readonly message: string };

/** The checkpoint body of a signed note, unverified (the prover only needs its size and root). */
export function checkpointOfNote(note: string): Checkpoint | undefined {
  const parsed = parseNote(note);
  return parsed.ok ? parseCheckpointBody(parsed.note.text) : undefined;
}

/**
 * A C2SP tlog-proof that event `seq` is in the tree of `checkpointNote` (a signed checkpoint of this
 * log), given the log's event hashes in order. It carries the event's hash as its `extra` line and
 * the checkpoint verbatim. Refuses a checkpoint whose root is not this log's root at its size.
 */
export function proveEvent(crypto: Pick<TransparencyCrypto, 'sha256'>, eventHashes: Iterable<string>, seq: number, checkpointNote: string): ProveEventResult {
  const checkpoint = checkpointOfNote(checkpointNote);
  if (checkpoint === undefined) return { ok: false, code: 'not_a_checkpoint', message: 'the checkpoint file is not a signed checkpoint' };
  const hasher = merkleHasher(crypto);
  const tree = new MerkleTree(hasher);
  const leaves: Uint8Array[] = [];
  for (const hash of eventHashes) {
    if (tree.size === checkpoint.size) break;
    const leaf = eventLeaf(hash);
    if (tree.size === seq - 1) leaves.push(leaf);
    tree.appendLeaf(leaf);
  }
  if (tree.size < checkpoint.size) return { ok: false, code: 'checkpoint_larger_than_log', message: `the checkpoint is at size ${checkpoint.size}, the log has ${tree.size} events` };
  if (!Number.isSafeInteger(seq) || seq < 1 || seq > checkpoint.size) return { ok: false, code: 'seq_out_of_range', message: `seq ${seq} is not in the checkpoint's tree (seq 1 to ${checkpoint.size})` };
  if (toHex(tree.root()) !== toHex(checkpoint.root)) return { ok: false, code: 'checkpoint_mismatch', message: `the checkpoint's root is not this log's root at size ${checkpoint.size}` };
  const proof = formatTlogProof({ extra: leaves[0] as Uint8Array, index: seq - 1, proof: tree.inclusionProof(seq - 1, checkpoint.size), checkpoint: checkpointNote });
  return { ok: true, proof, checkpoint };
}

/**
 * proveEvent from a MerkleTree of the log's leaves kept up to date (stored subtrees: O(log n) per
 * proof, no rebuild), given the proven event's hash (from the log). The same checks and result:
 * the checkpoint's root must be the tree's root at its size, and the event's leaf the tree's.
 */
export function proveEventInTree(crypto: Pick<TransparencyCrypto, 'sha256'>, tree: MerkleTree, eventHash: string, seq: number, checkpointNote: string): ProveEventResult {
  const checkpoint = checkpointOfNote(checkpointNote);
  if (checkpoint === undefined) return { ok: false, code: 'not_a_checkpoint', message: 'the checkpoint file is not a signed checkpoint' };
  if (tree.size < checkpoint.size) return { ok: false, code: 'checkpoint_larger_than_log', message: `the checkpoint is at size ${checkpoint.size}, the log has ${tree.size} events` };
  if (!Number.isSafeInteger(seq) || seq < 1 || seq > checkpoint.size) return { ok: false, code: 'seq_out_of_range', message: `seq ${seq} is not in the checkpoint's tree (seq 1 to ${checkpoint.size})` };
  if (!equalBytes(tree.root(checkpoint.size), checkpoint.root)) return { ok: false, code: 'checkpoint_mismatch', message: `the checkpoint's root is not this log's root at size ${checkpoint.size}` };
  const leaf = eventLeaf(eventHash);
  if (!equalBytes(merkleHasher(crypto).leaf(leaf), tree.leafHash(seq - 1))) return { ok: false, code: 'checkpoint_mismatch', message: `event hash ${eventHash} is not leaf ${seq - 1} of this tree` };
  const proof = formatTlogProof({ extra: leaf, index: seq - 1, proof: tree.inclusionProof(seq - 1, checkpoint.size), checkpoint: checkpointNote });
  return { ok: true, proof, checkpoint };
}

export type VerifyEventProofResult =
  | { readonly ok: true; readonly seq: number; readonly eventHash: string; readonly checkpoint: Checkpoint; readonly cosignedBy: readonly string[] }
  | { readonly ok: false; readonly code: 'malformed' | 'bad_checkpoint' | 'bad_leaf' | 'bad_proof' | 'event_mismatch'; readonly message: string };

/**
 * Checks a tlog-proof of one event with only the log's verifier key: the checkpoint's signature (and
 * the given witnesses' cosignatures), then the inclusion of the leaf (the `extra` line) at index
 * seq − 1. With `eventHash`, the leaf must be that hash (recompute it from the event you hold).
 */
export function verifyEventProof(
  crypto: TransparencyCrypto,
  proofText: string,
  logKey: VerifierKey,
  options: { readonly witnesses?: readonly VerifierKey[]; readonly eventHash?: string; readonly seq?: number } = {},
): VerifyEventProofResult {
  const proof = parseTlogProof(proofText);
  if (proof === undefined) return { ok: false, code: 'malformed', message: 'not a C2SP tlog-proof (c2sp.org/tlog-proof@v1)' };
  const checkpoint = verifyCheckpoint(crypto, proof.checkpoint, logKey, options.witnesses ?? []);
  if (!checkpoint.ok) return { ok: false, code: 'bad_checkpoint', message: `the checkpoint: ${checkpoint.message}` };
  const leaf = proof.extra;
  if (leaf === undefined || leaf.length !== hashBytes) return { ok: false, code: 'bad_leaf', message: 'the proof carries no 32-byte event hash (extra line)' };
  const eventHash = toHex(leaf);
  const seq = proof.index + 1;
  if (options.eventHash !== undefined && options.eventHash !== eventHash) return { ok: false, code: 'event_mismatch', message: `the proof is for event hash ${eventHash}, not ${options.eventHash}` };
  if (options.seq !== undefined && options.seq !== seq) return { ok: false, code: 'event_mismatch', message: `the proof is for seq ${seq}, not ${options.seq}` };
  const hasher = merkleHasher(crypto);
  if (!verifyInclusion(hasher, proof.index, checkpoint.checkpoint.size, hasher.leaf(leaf), proof.proof, checkpoint.checkpoint.root)) {
    return { ok: false, code: 'bad_proof', message: `the inclusion proof does not lead from the leaf at index ${proof.index} to the checkpoint's root` };
  }
  return { ok: true, seq, eventHash, checkpoint: checkpoint.checkpoint, cosignedBy: checkpoint.cosignedBy };
}

export type CheckLogResult =
  | { readonly ok: true; readonly size: number; readonly logSize: number; readonly checkpoint: Checkpoint }
  | { readonly ok: false; readonly code: 'bad_checkpoint' | 'truncated' | 'forked'; readonly message: string };

/** Whether a log (its event hashes in order) is the log of a signed checkpoint or an extension of it. */
export function checkLogAgainstCheckpoint(crypto: TransparencyCrypto, eventHashes: Iterable<string>, checkpointNote: string, logKey: VerifierKey): CheckLogResult {
  const verified = verifyCheckpoint(crypto, checkpointNote, logKey);
  if (!verified.ok) return { ok: false, code: 'bad_checkpoint', message: `the checkpoint does not verify: ${verified.message}` };
  const { size, root } = verified.checkpoint;
  const hasher = merkleHasher(crypto);
  const frontier = new CompactFrontier(hasher);
  let logSize = 0;
  let rootAtSize: Uint8Array | undefined = size === 0 ? hasher.emptyRoot : undefined;
  for (const hash of eventHashes) {
    logSize++;
    if (frontier.size < size) {
      frontier.appendLeafHash(hasher.leaf(eventLeaf(hash)));
      if (frontier.size === size) rootAtSize = frontier.root();
    }
  }
  if (rootAtSize === undefined) return { ok: false, code: 'truncated', message: `the checkpoint is at size ${size} but the log has ${logSize} events: it was truncated or rolled back` };
  if (toHex(rootAtSize) !== toHex(root)) return { ok: false, code: 'forked', message: `the log's tree at size ${size} has another root than the checkpoint: the log was rewritten or forked` };
  return { ok: true, size, logSize, checkpoint: verified.checkpoint };
}

import { fromBase64, parseDecimal, toBase64 } from './bytes';
import type { TransparencyCrypto } from './crypto';
import { hashBytes } from './merkleHasher';
import { ed25519NoteVerifier, type VerifierKey } from './noteKeys';
import { cosignatureVerifier } from './cosignature';
import { verifyNote } from './signedNote';

/** A C2SP tlog-checkpoint (c2sp.org/tlog-checkpoint): the tree head of a log at one size. */
export interface Checkpoint {
  readonly origin: string;
  readonly size: number;
  /** The 32-byte RFC 9162 root hash of the tree of `size` leaves. */
  readonly root: Uint8Array;
  /** Opaque extension lines after the root (this package writes none). */
  readonly extensions: readonly string[];
}

/** The note text: `<origin>\n<size>\n<base64 root>\n` (plus extension lines, if any). */
export function formatCheckpointBody(checkpoint: Pick<Checkpoint, 'origin' | 'size' | 'root'> & { readonly extensions?: readonly string[] }): string {
  const extensions = checkpoint.extensions ?? [];
  return `${checkpoint.origin}\n${checkpoint.size}\n${toBase64(checkpoint.root)}\n${extensions.map((e) => `${e}\n`).join('')}`;
}

/** Parses a checkpoint body (the note text); undefined when it is not one. */
export function parseCheckpointBody(text: string): Checkpoint | undefined {
  if (typeof text !== 'string' || !text.endsWith('\n')) return undefined;
  const lines = text.slice(0, -1).split('\n');
  if (lines.length < 3 || lines.some((line) => line.length === 0)) return undefined;
  const [origin, sizeText, rootText, ...extensions] = lines as [string, string, string, ...string[]];
  const size = parseDecimal(sizeText);
  const root = fromBase64(rootText);
  if (size === undefined || root === undefined || root.length !== hashBytes) return undefined;
  return { origin, size, root, extensions };
}

export type CheckpointVerifyResult =
  | { readonly ok: true; readonly checkpoint: Checkpoint; readonly text: string; readonly cosignedBy: readonly string[] }
  | { readonly ok: false; readonly code: 'invalid_note' | 'not_signed_by_log' | 'origin_mismatch' | 'not_a_checkpoint'; readonly message: string };

/**
 * Verifies a signed checkpoint: signed by `log` (whose key name must be the origin), every
 * signature by a given witness (C2SP tlog-cosignature, type 0x04 key) valid; unknown signature lines
 * are ignored. `cosignedBy` names the given witnesses whose cosignature verified.
 */
export function verifyCheckpoint(crypto: TransparencyCrypto, note: string | Uint8Array, log: VerifierKey, witnesses: readonly VerifierKey[] = []): CheckpointVerifyResult {
  const verifiers = [ed25519NoteVerifier(crypto, log), ...witnesses.map((w) => cosignatureVerifier(crypto, w))];
  const verified = verifyNote(note, verifiers);
  if (!verified.ok) return { ok: false, code: verified.code === 'no_known_signature' ? 'not_signed_by_log' : 'invalid_note', message: verified.message };
  if (!verified.verifiedBy.includes(log.name)) return { ok: false, code: 'not_signed_by_log', message: `no signature by ${log.name}` };
  const checkpoint = parseCheckpointBody(verified.text);
  if (checkpoint === undefined) return { ok: false, code: 'not_a_checkpoint', message: 'the note is not a checkpoint (<origin>, <size>, <base64 root>)' };
  if (checkpoint.origin !== log.name) return { ok: false, code: 'origin_mismatch', message: `the checkpoint's origin ${JSON.stringify(checkpoint.origin)} is not the key's name ${JSON.stringify(log.name)}` };
  return { ok: true, checkpoint, text: verified.text, cosignedBy: verified.verifiedBy.filter((name) => name !== log.name) };
}

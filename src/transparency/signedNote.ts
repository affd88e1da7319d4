import { concatBytes, fromBase64, fromUtf8, toBase64, utf8 } from './bytes';

// C2SP signed-note (c2sp.org/signed-note): text ending in "\n", a blank line, then one or more
// lines "— <key name> <base64(4-byte key ID ‖ signature)>\n".

/** Bounds on hostile input: the spec asks verifiers to accept at least 16 signatures. */
export const noteLimits = { noteBytesMax: 1_000_000, signaturesMax: 100, signatureBytesMax: 8_192 } as const;

export interface NoteSignature {
  readonly name: string;
  /** The uint32 key ID (big-endian first four bytes of the signature). */
  readonly keyId: number;
  /** The signature bytes after the key ID. */
  readonly signature: Uint8Array;
}

export interface ParsedNote {
  /** The signed text, including its final newline. */
  readonly text: string;
  readonly signatures: readonly NoteSignature[];
}

export type NoteParseError = 'too_large' | 'not_utf8' | 'control_character' | 'malformed' | 'bad_signature_line' | 'too_many_signatures';

const emDash = '\u2014';
const signatureLinePattern = /^\u2014 ([^\s+]+) ([A-Za-z0-9+/=]+)$/u;

/** Splits a signed note into its text and signature lines; never throws on hostile input. */
export function parseNote(note: string | Uint8Array): { readonly ok: true; readonly note: ParsedNote } | { readonly ok: false; readonly code: NoteParseError } {
  const bytes = typeof note === 'string' ? utf8(note) : note;
  if (bytes.length > noteLimits.noteBytesMax) return { ok: false, code: 'too_large' };
  const text = typeof note === 'string' ? note : fromUtf8(bytes);
  if (text === undefined || !text.isWellFormed()) return { ok: false, code: 'not_utf8' };
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0009\u000b-\u001f]/.test(text)) return { ok: false, code: 'control_character' };
  if (!text.endsWith('\n')) return { ok: false, code: 'malformed' };
  // The text is separated from the signatures by the last blank line.
  const split = text.lastIndexOf('\n\n');
  if (split < 0) return { ok: false, code: 'malformed' };
  const body = text.slice(0, split + 1);
  const lines = text.slice(split + 2, -1).split('\n');
  if (lines.length > noteLimits.signaturesMax) return { ok: false, code: 'too_many_signatures' };
  const signatures: NoteSignature[] = [];
  for (const line of lines) {
    const match = signatureLinePattern.exec(line);
    const raw = match === null ? undefined : fromBase64(match[2] as string);
    if (match === null || raw === undefined || raw.length < 5 || raw.length > noteLimits.signatureBytesMax) return { ok: false, code: 'bad_signature_line' };
    const keyId = ((raw[0] as number) * 2 ** 24) + ((raw[1] as number) << 16) + ((raw[2] as number) << 8) + (raw[3] as number);
    signatures.push({ name: match[1] as string, keyId, signature: raw.slice(4) });
  }
  return { ok: true, note: { text: body, signatures } };
}

export function keyIdBytes(keyId: number): Uint8Array {
  return new Uint8Array([Math.floor(keyId / 2 ** 24) & 0xff, (keyId >>> 16) & 0xff, (keyId >>> 8) & 0xff, keyId & 0xff]);
}

/** One "— name base64(keyID ‖ signature)" line, with its newline. */
export function signatureLine(name: string, keyId: number, signature: Uint8Array): string {
  return `${emDash} ${name} ${toBase64(concatBytes(keyIdBytes(keyId), signature))}\n`;
}

/** Whether `text` can be signed as a note text: ends in a newline, no other control characters. */
export function isNoteText(text: string): boolean {
  // eslint-disable-next-line no-control-regex
  return text.endsWith('\n') && !/[\u0000-\u0009\u000b-\u001f]/.test(text);
}

/** Key names: non-empty, no Unicode space, no plus (signed-note). */
export function isKeyName(name: string): boolean {
  return name.length > 0 && name.length <= 1_024 && !/[\s+]/u.test(name) && !/[\u0000-\u001f]/.test(name);
}

/** Something that checks signatures of one key (name and key ID) on a note's text. */
export interface NoteVerifier {
  readonly name: string;
  readonly keyId: number;
  verify(text: Uint8Array, signature: Uint8Array): boolean;
}

export type NoteVerifyResult =
  | { readonly ok: true; readonly text: string; readonly verifiedBy: readonly string[]; readonly unknownSignatures: number }
  | { readonly ok: false; readonly code: NoteParseError | 'no_known_signature' | 'invalid_signature'; readonly message: string };

/**
 * Verifies a signed note against known keys: signatures from unknown keys (name and key ID not
 * both known) are ignored; a known key's signature that fails rejects the note; at least one known
 * key must have signed it.
 */
export function verifyNote(note: string | Uint8Array, verifiers: readonly NoteVerifier[]): NoteVerifyResult {
  const parsed = parseNote(note);
  if (!parsed.ok) return { ok: false, code: parsed.code, message: `not a signed note (${parsed.code})` };
  const text = utf8(parsed.note.text);
  const verifiedBy: string[] = [];
  let unknown = 0;
  for (const sig of parsed.note.signatures) {
    const verifier = verifiers.find((v) => v.name === sig.name && v.keyId === sig.keyId);
    if (verifier === undefined) {
      unknown++;
      continue;
    }
    if (!verifier.verify(text, sig.signature)) return { ok: false, code: 'invalid_signature', message: `the signature by ${sig.name} does not verify` };
    if (!verifiedBy.includes(sig.name)) verifiedBy.push(sig.name);
  }
  if (verifiedBy.length === 0) return { ok: false, code: 'no_known_signature', message: 'no signature by a known key' };
  return { ok: true, text: parsed.note.text, verifiedBy, unknownSignatures: unknown };
}

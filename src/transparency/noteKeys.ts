import { concatBytes, fromBase64, fromHex, toBase64, utf8 } from './bytes';
import type { TransparencyCrypto, TransparencySigner } from './crypto';
import { isKeyName, signatureLine, type NoteVerifier } from './signedNote';

/** Signature type bytes of signed-note: 0x01 Ed25519 note signatures, 0x04 Ed25519 cosignatures. */
export const signatureTypes = { ed25519: 0x01, cosignatureV1: 0x04 } as const;
export type SignatureType = (typeof signatureTypes)[keyof typeof signatureTypes];

/** key ID = SHA-256(name ‖ 0x0A ‖ type ‖ public key)[:4], as a big-endian uint32 (signed-note). */
export function noteKeyId(crypto: Pick<TransparencyCrypto, 'sha256'>, name: string, type: number, publicKey: Uint8Array): number {
  const digest = crypto.sha256(concatBytes(utf8(name), new Uint8Array([0x0a, type]), publicKey));
  return (digest[0] as number) * 2 ** 24 + (((digest[1] as number) << 16) | ((digest[2] as number) << 8) | (digest[3] as number));
}

export interface VerifierKey {
  readonly name: string;
  readonly keyId: number;
  readonly type: SignatureType;
  readonly publicKey: Uint8Array;
}

export interface SignerKey {
  readonly name: string;
  readonly keyId: number;
  /** The 32-byte Ed25519 seed (RFC 8032 private key). */
  readonly seed: Uint8Array;
  readonly publicKey: Uint8Array;
}

export type KeyParseResult<K> = { readonly ok: true; readonly key: K } | { readonly ok: false; readonly message: string };

/** `count` fields separated by '+', the last one taking the rest of the text. */
function splitPlus(text: string, count: number): string[] | undefined {
  const fields: string[] = [];
  let rest = text;
  for (let i = 1; i < count; i++) {
    const at = rest.indexOf('+');
    if (at < 0) return undefined;
    fields.push(rest.slice(0, at));
    rest = rest.slice(at + 1);
  }
  fields.push(rest);
  return fields;
}

function hex8(keyId: number): string {
  return keyId.toString(16).padStart(8, '0');
}

/** `<name>+<hex key ID>+<base64(type ‖ public key)>`; the key ID must match the name and key. */
export function parseVerifierKey(crypto: Pick<TransparencyCrypto, 'sha256'>, text: string): KeyParseResult<VerifierKey> {
  if (typeof text !== 'string' || text.length > 4_096) return { ok: false, message: 'not a verifier key' };
  // The base64 key may itself contain '+': split off only the name and the key ID.
  const parts = splitPlus(text.trim(), 3);
  if (parts === undefined) return { ok: false, message: 'a verifier key is <name>+<key id>+<key>' };
  const [name, idHex, keyB64] = parts;
  const idBytes = idHex.length === 8 ? fromHex(idHex) : undefined;
  const raw = fromBase64(keyB64);
  if (!isKeyName(name) || idBytes === undefined || raw === undefined) return { ok: false, message: 'malformed verifier key' };
  const type = raw[0];
  if ((type !== signatureTypes.ed25519 && type !== signatureTypes.cosignatureV1) || raw.length !== 33) return { ok: false, message: 'not an Ed25519 verifier key (type 0x01 or 0x04, 32-byte key)' };
  const publicKey = raw.slice(1);
  const keyId = noteKeyId(crypto, name, type, publicKey);
  if (hex8(keyId) !== idHex) return { ok: false, message: 'the key ID does not match the name and key' };
  return { ok: true, key: { name, keyId, type, publicKey } };
}

export function formatVerifierKey(key: Pick<VerifierKey, 'name' | 'keyId' | 'type' | 'publicKey'>): string {
  return `${key.name}+${hex8(key.keyId)}+${toBase64(concatBytes(new Uint8Array([key.type]), key.publicKey))}`;
}

/** `PRIVATE+KEY+<name>+<hex key ID>+<base64(0x01 ‖ seed)>` (the Go sumdb/note signer key format). */
export function parseSignerKey(crypto: TransparencySigner, text: string): KeyParseResult<SignerKey> {
  if (typeof text !== 'string' || text.length > 4_096) return { ok: false, message: 'not a signer key' };
  const parts = splitPlus(text.trim(), 5);
  if (parts === undefined || parts[0] !== 'PRIVATE' || parts[1] !== 'KEY') return { ok: false, message: 'a signer key is PRIVATE+KEY+<name>+<key id>+<key>' };
  const [, , name, idHex, keyB64] = parts;
  const raw = fromBase64(keyB64);
  if (!isKeyName(name) || idHex.length !== 8 || fromHex(idHex) === undefined || raw === undefined) return { ok: false, message: 'malformed signer key' };
  if (raw[0] !== signatureTypes.ed25519 || raw.length !== 33) return { ok: false, message: 'not an Ed25519 signer key' };
  const seed = raw.slice(1);
  const publicKey = crypto.ed25519PublicKey(seed);
  const keyId = noteKeyId(crypto, name, signatureTypes.ed25519, publicKey);
  if (hex8(keyId) !== idHex) return { ok: false, message: 'the key ID does not match the name and key' };
  return { ok: true, key: { name, keyId, seed, publicKey } };
}

export function formatSignerKey(key: Pick<SignerKey, 'name' | 'keyId' | 'seed'>): string {
  return `PRIVATE+KEY+${key.name}+${hex8(key.keyId)}+${toBase64(concatBytes(new Uint8Array([signatureTypes.ed25519]), key.seed))}`;
}

/** A new Ed25519 note key named `name` (a schema-less URL is recommended, e.g. example.com/log). */
export function generateSignerKey(crypto: TransparencySigner, name: string): SignerKey {
  if (!isKeyName(name)) throw new TypeError('a key name must be non-empty, without spaces or "+"');
  const seed = crypto.randomBytes(32);
  const publicKey = crypto.ed25519PublicKey(seed);
  return { name, keyId: noteKeyId(crypto, name, signatureTypes.ed25519, publicKey), seed, publicKey };
}

export function verifierKeyOf(key: SignerKey): VerifierKey {
  return { name: key.name, keyId: key.keyId, type: signatureTypes.ed25519, publicKey: key.publicKey };
}

/** A NoteVerifier for an Ed25519 (type 0x01) verifier key. */
export function ed25519NoteVerifier(crypto: TransparencyCrypto, key: VerifierKey): NoteVerifier {
  if (key.type !== signatureTypes.ed25519) throw new TypeError('not an Ed25519 note key (type 0x01)');
  return { name: key.name, keyId: key.keyId, verify: (text, signature) => signature.length === 64 && crypto.ed25519Verify(key.publicKey, text, signature) };
}

/** Signs `text` (ending in a newline) and returns the signed note: text, blank line, signature line. */
export function signNote(crypto: TransparencySigner, key: SignerKey, text: string): string {
  return `${text}\n${signatureLine(key.name, key.keyId, crypto.ed25519Sign(key.seed, utf8(text)))}`;
}

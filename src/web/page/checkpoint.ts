// Checks a signed checkpoint in the page, with WebCrypto only: the C2SP signed-note signature by the
// verifier key, then that the log the page verified has that checkpoint's tree as its first `size`
// leaves (RFC 9162 Merkle tree over the events' hashes). The server is not trusted for any of it.

/** The WebCrypto calls used here (injected so the checks run in Node's WebCrypto in unit tests). */
export interface CheckpointCrypto {
  sha256(bytes: Uint8Array): Promise<Uint8Array>;
  verifyEd25519(publicKey: Uint8Array, signature: Uint8Array, message: Uint8Array): Promise<boolean>;
}

export type CheckpointState = 'checking' | 'waiting' | 'consistent' | 'bad_signature' | 'inconsistent' | 'malformed';

export interface CheckpointStatus {
  readonly state: CheckpointState;
  readonly message: string;
}

export interface Checkpoint {
  readonly origin: string;
  readonly size: number;
  readonly root: Uint8Array;
  readonly body: string;
  readonly signatures: readonly { readonly name: string; readonly keyId: Uint8Array; readonly signature: Uint8Array }[];
}

export interface VerifierKey {
  readonly name: string;
  readonly keyId: Uint8Array;
  readonly publicKey: Uint8Array;
}

const noteCharsMax = 65_536;
const encoder = new TextEncoder();

export function base64Bytes(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return undefined;
  const binary = atob(text);
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

/** `<name>+<8 hex key id>+<base64 of 0x01 ‖ 32-byte Ed25519 key>` (the note verifier key text). */
export function parseVerifierKey(text: string): VerifierKey | undefined {
  // The base64 key may itself contain '+': split at the first two only.
  const match = /^([^+\s]+)\+([0-9a-f]{8})\+(\S+)$/.exec(text.trim());
  if (match === null) return undefined;
  const [, name, idHex, keyText] = match as unknown as [string, string, string, string];
  const key = base64Bytes(keyText);
  if (name === '' || !/^[0-9a-f]{8}$/.test(idHex) || key === undefined || key.length !== 33 || key[0] !== 1) return undefined;
  const keyId = Uint8Array.from(idHex.match(/../g) as string[], (h) => parseInt(h, 16));
  return { name, keyId, publicKey: key.slice(1) };
}

/** A C2SP signed note whose text is a tlog-checkpoint body: `<origin>\n<size>\n<base64 root>\n`. */
export function parseCheckpointNote(note: string): Checkpoint | undefined {
  if (note.length > noteCharsMax) return undefined;
  const split = note.indexOf('\n\n');
  if (split < 0) return undefined;
  const body = note.slice(0, split + 1);
  const lines = body.split('\n');
  if (lines.length !== 4 || lines[3] !== '') return undefined;
  const [origin, sizeText, rootText] = lines as [string, string, string];
  const root = base64Bytes(rootText);
  if (origin === '' || !/^(0|[1-9]\d{0,15})$/.test(sizeText) || root === undefined || root.length !== 32) return undefined;
  const signatures: { name: string; keyId: Uint8Array; signature: Uint8Array }[] = [];
  for (const line of note.slice(split + 2).split('\n')) {
    if (line === '') continue;
    const match = /^\u2014 (\S+) (\S+)$/.exec(line);
    if (match === null) return undefined;
    const bytes = base64Bytes(match[2] as string);
    if (bytes === undefined || bytes.length < 5) return undefined;
    signatures.push({ name: match[1] as string, keyId: bytes.slice(0, 4), signature: bytes.slice(4) });
  }
  return { origin, size: Number(sizeText), root, body, signatures };
}

/** Whether the note carries a valid signature by `key` (lines by other keys are ignored, as C2SP says). */
export async function signedBy(checkpoint: Checkpoint, key: VerifierKey, crypto: CheckpointCrypto): Promise<boolean> {
  for (const s of checkpoint.signatures) {
    if (s.name !== key.name || !sameBytes(s.keyId, key.keyId) || s.signature.length !== 64) continue;
    if (await crypto.verifyEd25519(key.publicKey, s.signature, encoder.encode(checkpoint.body))) return true;
  }
  return false;
}

/** RFC 9162 Merkle tree hash of the leaves (32-byte event hashes): leaf 0x00 ‖ l, node 0x01 ‖ l ‖ r. */
export async function merkleRoot(leaves: readonly Uint8Array[], crypto: CheckpointCrypto): Promise<Uint8Array> {
  if (leaves.length === 0) return crypto.sha256(new Uint8Array(0));
  let level = await Promise.all(leaves.map((leaf) => crypto.sha256(concat([0], leaf))));
  // Pairing left to right and carrying an odd last node up unchanged is RFC 9162's split at the
  // largest power of two below n, computed bottom-up.
  while (level.length > 1) {
    const next: Promise<Uint8Array>[] = [];
    for (let i = 0; i + 1 < level.length; i += 2) next.push(crypto.sha256(concat([1], level[i] as Uint8Array, level[i + 1] as Uint8Array)));
    const carried = level.length % 2 === 1 ? [level[level.length - 1] as Uint8Array] : [];
    level = [...(await Promise.all(next)), ...carried];
  }
  return level[0] as Uint8Array;
}

/**
 * The checkpoint's status against the hashes the page has verified so far: `waiting` until the
 * verified chain reaches the checkpoint's size, then `consistent` when its first `size` leaves have
 * the checkpoint's root (the log is the checkpoint's log or extends it).
 */
export async function checkCheckpoint(note: string, verifierKey: string, verifiedHashes: readonly string[], chainBroken: boolean, crypto: CheckpointCrypto): Promise<CheckpointStatus> {
  const checkpoint = parseCheckpointNote(note);
  const key = parseVerifierKey(verifierKey);
  if (checkpoint === undefined) return { state: 'malformed', message: 'checkpoint: not a signed tlog-checkpoint note' };
  if (key === undefined) return { state: 'malformed', message: 'checkpoint: the verifier key is not a note verifier key' };
  const keyId = (await crypto.sha256(concat(encoder.encode(`${key.name}\n`), [1], key.publicKey))).slice(0, 4);
  if (!sameBytes(keyId, key.keyId)) return { state: 'malformed', message: `checkpoint: the verifier key's id does not match its name and key` };
  if (!(await signedBy(checkpoint, key, crypto))) return { state: 'bad_signature', message: `checkpoint ${checkpoint.origin} @ ${checkpoint.size}: no valid signature by ${key.name}` };
  if (verifiedHashes.length < checkpoint.size) {
    return chainBroken
      ? { state: 'inconsistent', message: `checkpoint ${checkpoint.origin} @ ${checkpoint.size}: signature valid, but the chain breaks before seq ${checkpoint.size}` }
      : { state: 'waiting', message: `checkpoint ${checkpoint.origin} @ ${checkpoint.size}: signature valid; waiting for the log to reach its size` };
  }
  const leaves = verifiedHashes.slice(0, checkpoint.size).map(hexBytes);
  const root = await merkleRoot(leaves, crypto);
  return sameBytes(root, checkpoint.root)
    ? { state: 'consistent', message: `checkpoint ${checkpoint.origin} @ ${checkpoint.size}: signature valid; this log is that checkpoint's log or extends it` }
    : { state: 'inconsistent', message: `checkpoint ${checkpoint.origin} @ ${checkpoint.size}: signature valid, but the first ${checkpoint.size} events have another Merkle root (history differs)` };
}

export function webCheckpointCrypto(subtle: SubtleCrypto): CheckpointCrypto {
  return {
    sha256: async (bytes) => new Uint8Array(await subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>)),
    verifyEd25519: async (publicKey, signature, message) => {
      try {
        const key = await subtle.importKey('raw', publicKey as Uint8Array<ArrayBuffer>, { name: 'Ed25519' }, false, ['verify']);
        return await subtle.verify({ name: 'Ed25519' }, key, signature as Uint8Array<ArrayBuffer>, message as Uint8Array<ArrayBuffer>);
      } catch {
        return false;
      }
    },
  };
}

function hexBytes(hex: string): Uint8Array {
  return Uint8Array.from(hex.match(/../g) ?? [], (h) => parseInt(h, 16));
}

function concat(...parts: (ArrayLike<number>)[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

import { concatBytes, utf8 } from './bytes';
import type { TransparencyCrypto, TransparencySigner } from './crypto';
import { noteKeyId, signatureTypes, type VerifierKey } from './noteKeys';
import { signatureLine, type NoteVerifier } from './signedNote';

// C2SP tlog-cosignature v1 with Ed25519 (type 0x04): the signature is timestamp (u64, big-endian)
// ‖ Ed25519 signature over "cosignature/v1\ntime <timestamp>\n" ‖ the checkpoint's note text.

const timestampMax = 2 ** 53 - 1; // the spec allows up to 2^63 − 1; beyond 2^53 a number is inexact

function cosignedMessage(timestamp: number, text: Uint8Array): Uint8Array {
  return concatBytes(utf8(`cosignature/v1\ntime ${timestamp}\n`), text);
}

function readU64(bytes: Uint8Array): number | undefined {
  let value = 0;
  for (let i = 0; i < 8; i++) value = value * 256 + (bytes[i] as number);
  return value <= timestampMax ? value : undefined;
}

/** A NoteVerifier for a witness's cosignature key (type 0x04); `onTimestamp` sees each verified timestamp. */
export function cosignatureVerifier(crypto: TransparencyCrypto, key: VerifierKey, onTimestamp?: (seconds: number) => void): NoteVerifier {
  if (key.type !== signatureTypes.cosignatureV1) throw new TypeError('not a cosignature key (type 0x04)');
  return {
    name: key.name,
    keyId: key.keyId,
    verify(text, signature) {
      if (signature.length !== 8 + 64) return false;
      const timestamp = readU64(signature);
      if (timestamp === undefined) return false;
      const ok = crypto.ed25519Verify(key.publicKey, cosignedMessage(timestamp, text), signature.subarray(8));
      if (ok) onTimestamp?.(timestamp);
      return ok;
    },
  };
}

/** The verifier key of a cosigner (witness) with this Ed25519 seed. */
export function cosignerVerifierKey(crypto: TransparencySigner, name: string, seed: Uint8Array): VerifierKey {
  const publicKey = crypto.ed25519PublicKey(seed);
  return { name, keyId: noteKeyId(crypto, name, signatureTypes.cosignatureV1, publicKey), type: signatureTypes.cosignatureV1, publicKey };
}

/** A witness's cosignature line on a checkpoint whose note text is `text`, at POSIX time `timestamp`. */
export function cosignatureLine(crypto: TransparencySigner, name: string, seed: Uint8Array, text: string, timestamp: number): string {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) throw new RangeError('a cosignature timestamp is a non-negative integer of seconds');
  const key = cosignerVerifierKey(crypto, name, seed);
  const ts = new Uint8Array(8);
  for (let i = 7, v = timestamp; i >= 0; i--, v = Math.floor(v / 256)) ts[i] = v % 256;
  return signatureLine(name, key.keyId, concatBytes(ts, crypto.ed25519Sign(seed, cosignedMessage(timestamp, utf8(text)))));
}

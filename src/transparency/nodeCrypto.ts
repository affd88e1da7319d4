import * as crypto from 'node:crypto';
import type { TransparencySigner } from './crypto';

// Node-only: the transparency primitives over node:crypto. Everything else in src/transparency
// takes them as a parameter, so a browser can bring its own.

const pkcs8Ed25519Prefix = Buffer.from('302e020100300506032b657004220420', 'hex');
const spkiEd25519Prefix = Buffer.from('302a300506032b6570032100', 'hex');
// Every input goes to OpenSSL: a hand-written JS SHA-256 for the tree's 33/65-byte inputs was
// measured (docs/transparency.md, "Figures") and saved ≈ 0.7 µs per event, too little to carry
// our own implementation of a hash function in security code.

function digestLatin1(data: Uint8Array): string {
  return crypto.hash('sha256', data, 'binary'); // Node >= 20.12 (package.json "engines")
}

/** Public keys seen recently, parsed once (verifying many proofs against one key is the common case). */
const publicKeys = new Map<string, crypto.KeyObject>();
const publicKeysMax = 64;

function publicKeyObject(publicKey: Uint8Array): crypto.KeyObject | undefined {
  if (publicKey.length !== 32) return undefined;
  const id = Buffer.from(publicKey).toString('hex');
  let key = publicKeys.get(id);
  if (key === undefined) {
    try {
      key = crypto.createPublicKey({ key: Buffer.concat([spkiEd25519Prefix, publicKey]), format: 'der', type: 'spki' });
    } catch {
      return undefined;
    }
    if (publicKeys.size >= publicKeysMax) publicKeys.delete(publicKeys.keys().next().value as string);
    publicKeys.set(id, key);
  }
  return key;
}

function privateKeyObject(seed: Uint8Array): crypto.KeyObject {
  if (seed.length !== 32) throw new RangeError('an Ed25519 seed has 32 bytes');
  return crypto.createPrivateKey({ key: Buffer.concat([pkcs8Ed25519Prefix, seed]), format: 'der', type: 'pkcs8' });
}

export const nodeCrypto: TransparencySigner = {
  // The digest comes back as a 'binary' (latin1) string, one char per byte: a string is a cheap young object,
  // while a 'buffer' output is a new ArrayBuffer per hash, about half the cost of hashing 33 bytes
  // (docs/transparency.md, "Figures"). `sha256` copies it into a pooled Buffer, `sha256Into` into `out`.
  sha256: (data) => Buffer.from(digestLatin1(data), 'latin1'),
  sha256Into(data, out, at) {
    const digest = digestLatin1(data);
    for (let i = 0; i < 32; i++) out[at + i] = digest.charCodeAt(i);
  },
  ed25519Verify(publicKey, message, signature) {
    const key = publicKeyObject(publicKey);
    if (key === undefined || signature.length !== 64) return false;
    try {
      return crypto.verify(null, message, key, signature);
    } catch {
      return false;
    }
  },
  ed25519Sign: (seed, message) => crypto.sign(null, message, privateKeyObject(seed)),
  ed25519PublicKey: (seed) => crypto.createPublicKey(privateKeyObject(seed)).export({ format: 'der', type: 'spki' }).subarray(spkiEd25519Prefix.length),
  randomBytes: (length) => crypto.randomBytes(length),
};

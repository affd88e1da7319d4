/**
 * The two primitives the transparency formats need, injected so the pure modules run anywhere:
 * `nodeCrypto` (src/transparency/nodeCrypto.ts) implements them with node:crypto; a browser page can
 * pass synchronous implementations of its own (e.g. @noble/hashes' sha256 and @noble/curves' ed25519).
 */
export interface TransparencyCrypto {
  /** SHA-256 of `data`; must not keep a reference to `data` (callers reuse scratch buffers). */
  sha256(data: Uint8Array): Uint8Array;
  /**
   * SHA-256 of `data` written to `out[at … at + 32)`, allocating no buffer (the tree's hot path: a
   * hash output per node is most of a native hash's cost). Optional: without it `sha256` is copied.
   */
  sha256Into?(data: Uint8Array, out: Uint8Array, at: number): void;
  /** RFC 8032 Ed25519 verification; false (never a throw) for a malformed key or signature. */
  ed25519Verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean;
}

/** What signing needs in addition (node-only in this package: nodeCrypto implements it). */
export interface TransparencySigner extends TransparencyCrypto {
  /** Ed25519 signature of `message` by the key with this 32-byte seed (RFC 8032 private key). */
  ed25519Sign(seed: Uint8Array, message: Uint8Array): Uint8Array;
  /** The 32-byte public key of a 32-byte seed. */
  ed25519PublicKey(seed: Uint8Array): Uint8Array;
  randomBytes(length: number): Uint8Array;
}

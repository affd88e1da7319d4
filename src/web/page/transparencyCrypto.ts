import { ed25519 } from '@noble/curves/ed25519.js';
import { sha256 } from '@noble/hashes/sha2.js';
import type { TransparencyCrypto } from '../../transparency/crypto';

/**
 * The transparency code wants synchronous SHA-256 and Ed25519 (WebCrypto is asynchronous only), so
 * the page bundles noble's audited implementations, as src/transparency/crypto.ts suggests. Strict
 * RFC 8032 verification (not ZIP-215), as node:crypto verifies.
 */
export const browserTransparencyCrypto: TransparencyCrypto = {
  sha256: (data) => sha256(data),
  ed25519Verify: (publicKey, message, signature) => {
    try {
      return ed25519.verify(signature, message, publicKey, { zip215: false });
    } catch {
      return false;
    }
  },
};

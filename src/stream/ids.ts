import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../domain/chain';

/** A bearer token: 256 random bits, shown once to the host, stored only as its SHA-256 digest. */
export function newToken(): string {
  return `atc_${randomBytes(32).toString('base64url')}`;
}

export function tokenDigest(token: string): string {
  return sha256Hex(token);
}

export function newGrantId(): string {
  return `g_${randomBytes(16).toString('hex')}`;
}

/** Call ids: a random 64-bit prefix per ledger object and a counter, unique across processes sharing a log. */
export function callIdSource(): () => string {
  const prefix = randomBytes(8).toString('hex');
  let counter = 0;
  return () => `c_${prefix}_${(++counter).toString(36)}`;
}

import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../domain/chain';
import { limits } from '../domain/limits';

/** A bearer token: 256 random bits, shown once to the host, stored only as its SHA-256 digest. */
export function newToken(): string {
  return `atc_${randomBytes(32).toString('base64url')}`;
}

export function tokenDigest(token: string): string {
  return sha256Hex(token);
}

/** The digest of a token an agent presented, or undefined (never hashed) when it cannot be a token: not a string, or longer than any issued one. */
export function presentedTokenDigest(token: unknown): string | undefined {
  return typeof token === 'string' && token.length <= limits.tokenCharsMax ? tokenDigest(token) : undefined;
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

/** Names one ledger object in a settlement journal (docs/storage.md). */
export function newJournalOwner(): string {
  return randomBytes(8).toString('hex');
}

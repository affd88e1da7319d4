import { timingSafeEqual } from 'node:crypto';
import { chainAuthority } from '../../domain/grantChain';
import { shardGet } from '../../domain/shardedMap';
import { presentedTokenDigest } from '../../stream/ids';
import type { Ledger } from '../../stream/types';

/** Who a request acts as: the grant its session uses, and the digest of the credential presented. */
export interface Authenticated {
  readonly ok: true;
  /** SHA-256 of the bearer credential: a session is bound to it (the credential itself is not kept). */
  readonly credentialDigest: Buffer;
  readonly grantId: string;
  /** oauth: the principal the access token names. */
  readonly principal?: string;
}

/** A refusal: 401 with an RFC 6750 error, or 403 (a principal the config or the host refuses). */
export interface AuthRefused {
  readonly ok: false;
  readonly status: 401 | 403;
  readonly error: 'invalid_token' | 'invalid_request' | 'insufficient_scope' | undefined;
  /** Says what failed; never the credential or a claim value. */
  readonly description: string;
}

export type AuthOutcome = Authenticated | AuthRefused;

export interface Authenticator {
  /** `bearer`: the credential after `Bearer `, or undefined when the request had none. */
  authenticate(bearer: string | undefined): Promise<AuthOutcome>;
}

export const bearerCharsMax = 16_384;

/** The credential of an `Authorization: Bearer …` header; undefined when absent or not a bearer. */
export function bearerOf(header: string | undefined): string | undefined {
  if (header === undefined || header.length > bearerCharsMax + 7) return undefined;
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header);
  return match?.[1];
}

export function refused(status: 401 | 403, error: AuthRefused['error'], description: string): AuthRefused {
  return { ok: false, status, error, description };
}

/** Compares two credential digests in constant time. */
export function sameCredential(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * `auth.tokens`: the bearer is a capability token issued on this ledger. Unknown, revoked (itself or
 * an ancestor), not yet valid or expired: 401 invalid_token, checked on every request.
 */
export function tokenAuthenticator(ledger: Ledger, clock: () => number): Authenticator {
  return {
    async authenticate(bearer) {
      if (bearer === undefined) return refused(401, undefined, 'a bearer token is required');
      const digest = presentedTokenDigest(bearer);
      if (digest === undefined) return refused(401, 'invalid_token', 'the token is not valid');
      const state = ledger.state();
      const grantId = shardGet(state.tokens, digest);
      const chain = chainAuthority(state, grantId, clock());
      if (!chain.ok) return refused(401, 'invalid_token', chain.reason === 'unknown_token' ? 'the token is not valid' : `the token's grant is ${chain.reason === 'revoked' ? 'revoked' : chain.reason === 'expired' ? 'expired' : 'not yet valid'}`);
      return { ok: true, credentialDigest: Buffer.from(digest, 'hex'), grantId: chain.grant.grantId };
    },
  };
}

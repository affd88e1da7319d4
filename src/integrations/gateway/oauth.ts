import { createHash } from 'node:crypto';
import type { Ledger } from '../../stream/types';
import { refused, type Authenticator } from './auth';
import type { GatewayConfig, OAuthConfig } from './config';
import { principalGrant } from './principalGrants';

type Jose = typeof import('jose');

const clockToleranceS = 30;
const jwksTimeoutMs = 5_000;
/** Algorithms accepted: asymmetric only (a JWKS never holds a shared secret), no `none`. */
const algorithms = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

/**
 * `auth.oauth`: the bearer is a JWT access token. Its signature (JWKS), `iss`, `aud` (= publicUrl,
 * RFC 8707), `exp` (required) and `nbf` are checked with jose; its `principalClaim` names the
 * principal, which acts with its own root grant (principalGrants.ts). A token that fails any check
 * is 401 invalid_token; a principal the config or the host refuses is 403.
 */
export async function oauthAuthenticator(ledger: Ledger, config: Pick<GatewayConfig, 'principals' | 'policies'>, oauth: OAuthConfig, resource: () => URL, clock: () => number): Promise<Authenticator> {
  // Loaded here (jose is ESM): the root entry and token-mode gateways never load it.
  const jose: Jose = await import('jose');
  const keys = oauth.jwks instanceof URL
    ? jose.createRemoteJWKSet(oauth.jwks, { timeoutDuration: jwksTimeoutMs })
    : jose.createLocalJWKSet({ keys: oauth.jwks.keys as unknown as import('jose').JWK[] });
  return {
    async authenticate(bearer) {
      if (bearer === undefined) return refused(401, undefined, 'a bearer access token is required');
      let payload: import('jose').JWTPayload;
      try {
        ({ payload } = await jose.jwtVerify(bearer, keys, {
          issuer: oauth.issuer,
          audience: resource().href,
          algorithms,
          requiredClaims: ['exp'],
          currentDate: new Date(clock()),
          clockTolerance: clockToleranceS,
        }));
      } catch {
        return refused(401, 'invalid_token', 'the access token is not valid (signature, issuer, audience or validity)');
      }
      const principal = payload[oauth.principalClaim];
      if (typeof principal !== 'string' || principal.length === 0 || principal.length > 256) return refused(401, 'invalid_token', `the access token has no usable ${oauth.principalClaim} claim`);
      const grant = await principalGrant(ledger, config, principal, clock());
      if (!grant.ok) return refused(403, 'insufficient_scope', grant.description);
      return { ok: true, credentialDigest: createHash('sha256').update(bearer).digest(), grantId: grant.grantId, principal };
    },
  };
}

import type { Ledger } from '../../stream/types';
import { tokenAuthenticator, type Authenticator } from './auth';
import type { GatewayConfig } from './config';
import { oauthAuthenticator } from './oauth';

/** Builds the authenticator the config asks for; `resource` is the served publicUrl (known once bound). */
export type AuthenticatorFactory = (resource: () => URL) => Promise<Authenticator>;

export function gatewayAuthenticator(config: GatewayConfig, ledger: Ledger, clock: () => number = Date.now): AuthenticatorFactory {
  const auth = config.auth;
  if ('tokens' in auth) return async () => tokenAuthenticator(ledger, clock);
  return (resource) => oauthAuthenticator(ledger, config, auth.oauth, resource, clock);
}

import type { Ledger } from '../../stream/types';
import { tokenAuthenticator, type Authenticator } from './auth';
import type { GatewayConfig } from './config';

export interface AuthenticatorOptions {
  readonly clock?: () => number;
  readonly report?: (line: string) => void;
}

/** The authenticator the config asks for. */
export async function gatewayAuthenticator(config: GatewayConfig, ledger: Ledger, options: AuthenticatorOptions = {}): Promise<Authenticator> {
  const clock = options.clock ?? Date.now;
  if ('tokens' in config.auth) return tokenAuthenticator(ledger, clock);
  throw new Error('auth.oauth is not available in this build');
}

import { AsyncLocalStorage } from 'node:async_hooks';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallRelay } from '../mcp/callRelay';
import type { CallLink, CallRouter } from '../mcp/relay/callRouter';

/** One connection to an upstream: its client, and the router of the calls in flight on it. */
export interface UpstreamConnection {
  readonly client: Client;
  readonly router: CallRouter;
}

/**
 * What a gateway tool's `run` needs from the session whose call it is: that session's own
 * connection to an HTTP upstream (one upstream session per agent session), the link through which
 * the upstream's requests and notifications during the call reach that session, and where to send
 * progress. `ledger.invoke` runs the tool in its caller's async context, so the session sets this
 * around `invoke`; nothing of it enters the ledger.
 */
export interface GatewayCall {
  httpConnection(upstream: string): Promise<UpstreamConnection>;
  readonly link: CallLink;
  readonly relay: CallRelay | undefined;
}

const storage = new AsyncLocalStorage<GatewayCall>();

export function runAsSessionCall<T>(call: GatewayCall, invoke: () => Promise<T>): Promise<T> {
  return storage.run(call, invoke);
}

/** The session call whose tool is running; undefined outside one (then the call fails closed). */
export function currentSessionCall(): GatewayCall | undefined {
  return storage.getStore();
}

import { AsyncLocalStorage } from 'node:async_hooks';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallRelay } from '../mcp/callRelay';

/**
 * What a gateway tool's `run` needs from the session whose call it is: that session's own client
 * for an HTTP upstream (one upstream session per agent session) and where to send progress.
 * `ledger.invoke` runs the tool in its caller's async context, so the session sets this around
 * `invoke`; nothing of it enters the ledger.
 */
export interface GatewayCall {
  httpClient(upstream: string): Promise<Client>;
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

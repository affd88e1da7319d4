import { AsyncLocalStorage } from 'node:async_hooks';
import type { ProgressToken, ServerNotification } from '@modelcontextprotocol/sdk/types.js';

/**
 * What a proxied tool run needs from the client's request besides its arguments: where to send
 * progress. `ledger.invoke` runs the tool in the caller's async context, so the request handler
 * sets this around `invoke` and the tool's `run` reads it; nothing of it enters the ledger.
 */
export interface CallRelay {
  readonly progressToken: ProgressToken | undefined;
  readonly sendNotification: (notification: ServerNotification) => Promise<void>;
}

export const callRelay = new AsyncLocalStorage<CallRelay>();

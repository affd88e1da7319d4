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

const storage = new AsyncLocalStorage<CallRelay>();
/** Calls running inside `storage.run` now. */
let relayed = 0;

/**
 * Runs `invoke` with its relay in reach of the tool's `run`, only when the client asked for progress
 * (a relay without a progress token carries nothing the tool uses). While an AsyncLocalStorage is
 * enabled, Node (20) runs a hook on every promise in the process (≈ 0.6 µs each, dozens per proxied
 * call), so the storage is enabled only while such a call runs and disabled after the last one.
 */
export function runWithRelay<T>(relay: CallRelay, invoke: () => Promise<T>): Promise<T> {
  if (relay.progressToken === undefined) return invoke();
  relayed++;
  return storage.run(relay, invoke).finally(() => {
    if (--relayed === 0) storage.disable();
  });
}

/** The relay of the call whose tool is running, if its client asked for progress. */
export function currentRelay(): CallRelay | undefined {
  return storage.getStore();
}

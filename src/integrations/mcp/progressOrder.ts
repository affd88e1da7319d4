import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * The SDK's protocol layer runs notification handlers a microtask later but handles a response at
 * once, and drops a request's progress handler with its response. When an upstream's last progress
 * notifications and its result arrive in one read (a busy proxy reads them together), the progress
 * would be lost before the proxy could relay it. Handing each response to the protocol one
 * microtask later, in arrival order, lets the notifications that came before it run first.
 * Call after `client.connect(transport)` (which installs the protocol's handler).
 */
export function keepProgressBeforeResponses(transport: Transport): void {
  const deliver = transport.onmessage;
  if (deliver === undefined) return;
  transport.onmessage = (message, extra) => {
    if (isResponseShaped(message)) {
      void Promise.resolve().then(() => deliver(message, extra));
      return;
    }
    deliver(message, extra);
  };
}

/**
 * A response by shape: no `method` (requests and notifications have one). Not the SDK's zod guards:
 * they cost a parse per message (and build zod errors for every notification); the protocol layer
 * still validates each message when it is delivered, so a malformed one is only delivered later.
 */
function isResponseShaped(message: JSONRPCMessage): boolean {
  return typeof message === 'object' && message !== null && !Object.prototype.hasOwnProperty.call(message, 'method');
}

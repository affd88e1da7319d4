import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isJSONRPCRequest, type JSONRPCMessage, type JSONRPCRequest, type MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';

type RequestDispatch = (request: JSONRPCRequest, extra?: MessageExtraInfo) => void;

/**
 * The SDK's protocol layer (1.x) classifies each incoming message by trying, in order, the zod
 * guards for a result response, an error response, a request and a notification. On a request the
 * first two fail, and a failing zod parse builds a ZodError (an `Error`, stack trace included) and
 * the localized text of every issue: ≈ 50–110 µs per `tools/call` on the bench VM, about a third of
 * what the SDK spends on the request (docs/mcp.md "Latency"). A client sends the proxy requests, so
 * this hands a message that passes the SDK's own request guard straight to the protocol's request
 * handler. The guards' schemas are strict objects, so a message that is a valid request is neither
 * kind of response: it takes the branch it took before, only without the two failed parses.
 * Everything else (responses to the proxy's own requests, notifications, invalid messages) goes
 * through the SDK's handler unchanged.
 *
 * Call after `server.connect(transport)` (the SDK's handler would first call one set on the transport
 * before connecting; the proxy sets none). The request handler is the protocol's private
 * `_onrequest`: if a later SDK release renames it, this returns false and changes nothing.
 */
export function dispatchRequestsFirst(server: Server, transport: Transport): boolean {
  const classify = transport.onmessage;
  const onrequest = (server as unknown as { readonly _onrequest?: unknown })._onrequest;
  if (classify === undefined || typeof onrequest !== 'function') return false;
  const dispatch = (onrequest as RequestDispatch).bind(server);
  transport.onmessage = <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo): void => {
    if (isRequestShaped(message) && isJSONRPCRequest(message)) dispatch(message, extra);
    else classify(message, extra);
  };
  return true;
}

/** Has own `method` and `id`: only such a message can pass the request guard (a notification has no `id`). */
function isRequestShaped(message: unknown): boolean {
  return typeof message === 'object' && message !== null && Object.prototype.hasOwnProperty.call(message, 'method') && Object.prototype.hasOwnProperty.call(message, 'id');
}

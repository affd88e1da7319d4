import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  ResultSchema,
  type ClientCapabilities,
  type ClientNotification,
  type ClientRequest,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { CallRouter } from './callRouter';

/** What the proxy's upstream client declares: every request the relay can carry to a client. */
export const relayedClientCapabilities: ClientCapabilities = { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } };

/** Requests from one upstream waiting for a client's answer at once; more are refused (a flood stays bounded). */
export const relayedRequestsMax = 64;

export interface UpstreamRequestRelayOptions {
  readonly upstream: Client;
  readonly router: CallRouter;
  /** One line per refusal (the method and why; never a parameter value). */
  readonly report?: (line: string) => void;
}

/**
 * A refusal sent to the upstream as a JSON-RPC error with this code and message. Not McpError: its
 * message carries an "MCP error <code>:" prefix, which the receiving SDK would add a second time.
 */
export class RelayRefusal extends Error {
  override readonly name = 'RelayRefusal';
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

type UpstreamExtra = RequestHandlerExtra<ClientRequest, ClientNotification>;
type RelayedRequest = { readonly method: string; readonly params?: { readonly [key: string]: unknown } };

/**
 * Relays `sampling/createMessage`, `elicitation/create` and `roots/list` from the upstream to the
 * session whose call caused them (CallRouter's rule), and the answer back. Refused with a JSON-RPC
 * error: a request tied to no call or to an ambiguous one, one the session's client did not
 * declare the capability for, a task-augmented one (tasks are not relayed), and any beyond
 * `relayedRequestsMax` waiting at once. The client's answer is checked by the SDK (result schemas).
 */
export function relayUpstreamRequests(options: UpstreamRequestRelayOptions): void {
  const { upstream, router } = options;
  const report = options.report ?? (() => undefined);
  let waiting = 0;
  const relay = async (request: RelayedRequest, extra: UpstreamExtra): Promise<Record<string, unknown>> => {
    const refuse = (code: number, why: string): RelayRefusal => {
      report(`upstream ${request.method} refused: ${why}`);
      return new RelayRefusal(code, `${request.method} refused: ${why}`);
    };
    if (request.params?.task !== undefined) throw refuse(ErrorCode.InvalidRequest, 'task-augmented requests are not relayed');
    const route = router.route();
    if ('refused' in route) throw refuse(ErrorCode.InvalidRequest, route.refused === 'no_call' ? 'it is tied to no tool call in flight' : 'tool calls of several sessions are in flight, so it cannot be tied to one');
    const missing = missingCapability(request, route.link.session.clientCapabilities());
    if (missing !== undefined) throw refuse(ErrorCode.MethodNotFound, `the client did not declare ${missing}`);
    if (waiting >= relayedRequestsMax) throw refuse(ErrorCode.InvalidRequest, `more than ${relayedRequestsMax} requests are waiting for the client`);
    waiting++;
    try {
      const forwarded = { method: request.method, ...(request.params !== undefined ? { params: request.params } : {}) } as ServerRequest;
      return await route.link.sendRequest(forwarded, ResultSchema, { signal: extra.signal });
    } finally {
      waiting--;
    }
  };
  // The SDK refuses a handler for a capability the client did not declare (relayedClientCapabilities):
  // the upstream then gets `method not found` from the SDK, which is a refusal too.
  const install = (set: () => void): void => {
    try {
      set();
    } catch {
      // not declared: not relayed
    }
  };
  install(() => upstream.setRequestHandler(CreateMessageRequestSchema, (request, extra) => relay(request, extra) as never));
  install(() => upstream.setRequestHandler(ElicitRequestSchema, (request, extra) => relay(request, extra) as never));
  install(() => upstream.setRequestHandler(ListRootsRequestSchema, (request, extra) => relay(request, extra) as never));
}

/** The capability (by its name in `initialize`) a request needs that the client did not declare. */
function missingCapability(request: RelayedRequest, declared: ClientCapabilities | undefined): string | undefined {
  switch (request.method) {
    case 'sampling/createMessage': {
      if (declared?.sampling === undefined) return 'sampling';
      const withTools = request.params?.tools !== undefined || request.params?.toolChoice !== undefined;
      return withTools && declared.sampling.tools === undefined ? 'sampling.tools' : undefined;
    }
    case 'elicitation/create': {
      const elicitation = declared?.elicitation;
      if (elicitation === undefined) return 'elicitation';
      // An empty `elicitation: {}` means form mode (the 2025-06-18 shape).
      const url = request.params?.mode === 'url';
      if (url) return elicitation.url === undefined ? 'elicitation.url' : undefined;
      return elicitation.form === undefined && elicitation.url !== undefined ? 'elicitation.form' : undefined;
    }
    case 'roots/list':
      return declared?.roots === undefined ? 'roots' : undefined;
    default:
      return request.method;
  }
}

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, RootsListChangedNotificationSchema, type CallToolRequest, type CallToolResult, type ServerNotification, type ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Ledger } from '../../stream/types';
import { toolCallResult, toolLabel } from '../mcp/callOutcome';
import { printable } from '../../text/printable';
import { withApprovalElicitation } from '../mcp/approvalElicitation';
import { refusedToolResult } from '../mcp/callResults';
import { noTelemetry, type GrantInvoke, type McpTelemetry } from '../mcp/telemetry';
import type { UpstreamToolSet } from '../mcp/upstreamTools';
import { runAsSessionCall, type GatewayCall } from './callContext';
import type { GatewaySession } from './session';
import { relaySessionRequests, sessionCapabilities, type SessionRelayUpstreams } from './sessionRelay';

type CallToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

export interface SessionServerOptions {
  readonly ledger: Ledger;
  readonly session: GatewaySession;
  readonly tools: () => UpstreamToolSet;
  /** Everything but tools: resources, prompts, completion, logging level, ping (sessionRelay). */
  readonly upstreams: SessionRelayUpstreams;
  readonly version: string;
  readonly callsInFlightMax: number;
  readonly report: (line: string) => void;
  /** A server span per tools/call continuing the client's trace context (`--otel`); default none. */
  readonly telemetry?: McpTelemetry;
  /** How a call runs for the session's grant; default `ledger.invokeAsGrant`. */
  readonly invoke?: GrantInvoke;
}

/**
 * A session's MCP server: `tools/list` shows the gateway tools the session's grant may call now,
 * and every `tools/call` goes through the ledger for that grant (the tool's `run` reaches the
 * upstream, relaying what the upstream sends during the call to this session). Beyond
 * `callsInFlightMax` running calls, a call is refused with a JSON-RPC error before the ledger or
 * any upstream sees it. Capabilities: tools, and what at least one upstream offers.
 */
export function createSessionServer(options: SessionServerOptions): Server {
  const { ledger, session, report } = options;
  const capabilities = { tools: { listChanged: true }, ...sessionCapabilities(options.upstreams) };
  const server = new Server({ name: 'atc-gateway', version: options.version }, { capabilities });
  const telemetry = options.telemetry ?? noTelemetry;
  const invoke: GrantInvoke = options.invoke ?? ((grantId, tool, args, invokeOptions) => ledger.invokeAsGrant(grantId, tool, args, invokeOptions));

  server.setRequestHandler(ListToolsRequestSchema, () => {
    const visible = new Set(visibleNames(ledger, session.grantId));
    return { tools: Array.from(options.tools().registered.values()).filter((t) => visible.has(t.name)) };
  });
  server.setRequestHandler(CallToolRequestSchema, (request, extra): Promise<CallToolResult> =>
    telemetry.serverRequest({ method: 'tools/call', target: request.params.name, meta: request.params._meta, requestId: extra.requestId, ...(extra.sessionId !== undefined ? { sessionId: extra.sessionId } : {}) }, () => callTool(request, extra)),
  );

  async function callTool(request: CallToolRequest, extra: CallToolExtra): Promise<CallToolResult> {
    const name = request.params.name;
    if (session.inFlight >= options.callsInFlightMax) {
      report(`${toolLabel(name)} refused: ${session.inFlight} calls in flight on the session`);
      throw new McpError(ErrorCode.InvalidRequest, `this session already has ${session.inFlight} calls in flight (limits.callsInFlightPerSessionMax); retry when one has ended`);
    }
    const refusal = options.tools().refused.get(name);
    if (refusal !== undefined) {
      report(`${toolLabel(name)} refused: ${printable(refusal)}`);
      return refusedToolResult(name, refusal);
    }
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(extra.signal.reason);
    extra.signal.addEventListener('abort', onAbort, { once: true });
    session.callStarted(controller);
    try {
      const progressToken = request.params._meta?.progressToken;
      const call: GatewayCall = {
        httpConnection: (upstream) => session.httpConnection(upstream),
        link: { session: session.relay, sendRequest: extra.sendRequest, sendNotification: extra.sendNotification },
        relay: progressToken === undefined ? undefined : { progressToken, sendNotification: extra.sendNotification },
      };
      const args = request.params.arguments ?? {};
      const asking = { ledger, clientCapabilities: server.getClientCapabilities(), extra, call: { grantId: session.grantId, tool: name, args }, approver: session.principal ?? `grant ${session.grantId}`, report };
      const outcome = await runAsSessionCall(call, () => withApprovalElicitation(asking, () => invoke<CallToolResult>(session.grantId, name, args, { signal: controller.signal })));
      return toolCallResult(outcome, name, controller.signal.aborted, report);
    } finally {
      extra.signal.removeEventListener('abort', onAbort);
      session.callEnded(controller);
    }
  }
  relaySessionRequests(server, session, options.upstreams);
  // The client's roots changed: the session's own upstream connections may ask again (during a call).
  server.setNotificationHandler(RootsListChangedNotificationSchema, () => {
    for (const connection of session.openHttpConnections().values()) void connection.then((c) => c.client.sendRootsListChanged()).catch(() => undefined);
  });
  return server;
}

function visibleNames(ledger: Ledger, grantId: string): string[] {
  try {
    return ledger.visibleToolsOfGrant(grantId).map((t) => t.name);
  } catch {
    return [];
  }
}

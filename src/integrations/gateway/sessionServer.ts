import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Ledger } from '../../stream/types';
import { toolCallResult, toolLabel } from '../mcp/callOutcome';
import { printable } from '../../text/printable';
import { refusedToolResult } from '../mcp/callResults';
import type { UpstreamToolSet } from '../mcp/upstreamTools';
import { runAsSessionCall } from './callContext';
import type { GatewaySession } from './session';

export interface SessionServerOptions {
  readonly ledger: Ledger;
  readonly session: GatewaySession;
  readonly tools: () => UpstreamToolSet;
  readonly version: string;
  readonly callsInFlightMax: number;
  readonly report: (line: string) => void;
}

/**
 * A session's MCP server: `tools/list` shows the gateway tools the session's grant may call now,
 * and every `tools/call` goes through the ledger for that grant (the tool's `run` reaches the
 * upstream). Beyond `callsInFlightMax` running calls, a call is refused with a JSON-RPC error before
 * the ledger or any upstream sees it.
 */
export function createSessionServer(options: SessionServerOptions): Server {
  const { ledger, session, report } = options;
  const server = new Server({ name: 'atc-gateway', version: options.version }, { capabilities: { tools: { listChanged: false } } });

  server.setRequestHandler(ListToolsRequestSchema, () => {
    const visible = new Set(visibleNames(ledger, session.grantId));
    return { tools: Array.from(options.tools().registered.values()).filter((t) => visible.has(t.name)) };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
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
      const call = { httpClient: (upstream: string) => session.httpClient(upstream), relay: progressToken === undefined ? undefined : { progressToken, sendNotification: extra.sendNotification } };
      const outcome = await runAsSessionCall(call, () => ledger.invokeAsGrant<CallToolResult>(session.grantId, name, request.params.arguments ?? {}, { signal: controller.signal }));
      return toolCallResult(outcome, name, controller.signal.aborted, report);
    } finally {
      extra.signal.removeEventListener('abort', onAbort);
      session.callEnded(controller);
    }
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

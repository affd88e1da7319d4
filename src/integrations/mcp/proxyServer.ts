import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, RootsListChangedNotificationSchema, type CallToolRequest, type CallToolResult, type ServerCapabilities, type ServerNotification, type ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { InvokeOutcome, Ledger } from '../../stream/types';
import { visibleToolNames } from '../visibleTools';
import { runWithRelay } from './callRelay';
import { printable } from '../../text/printable';
import { defaultMcpApprover, withApprovalElicitation } from './approvalElicitation';
import { toolCallResult, toolLabel } from './callOutcome';
import { noTelemetry, type McpTelemetry } from './telemetry';
import { refusedToolResult } from './callResults';
import { CallRouter, type RelaySession } from './relay/callRouter';
import { relayDownstreamRequests, relayedServerCapabilities } from './relay/forwarding';
import { relayUpstreamNotifications } from './relay/upstreamNotifications';
import { relayUpstreamRequests } from './relay/upstreamRequests';
import type { UpstreamToolSet } from './upstreamTools';

type CallToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

export interface ProxyServerOptions {
  readonly ledger: Ledger;
  /** Spans for each tools/call, continuing the client's trace context (`--otel`); default none. */
  readonly telemetry?: McpTelemetry;
  /** The agent's grant token: used for `invoke` and `tools/list`, never sent upstream. */
  readonly token: string;
  /** The token's grant: a call of it waiting for approval is asked about by elicitation. */
  readonly grantId: string;
  /** Recorded as `by` when the client answers an approval question (`--approver`). Default `mcp-client`. */
  readonly approver?: string;
  readonly upstream: Client;
  readonly tools: UpstreamToolSet;
  readonly version: string;
  /** One line per decision (tool name, outcome, reason, call id; never a token or an argument value). */
  readonly report?: (line: string) => void;
  /** How often, while calls run, the shared log is read for other processes' revocations. Default 250. */
  readonly revocationPollMs?: number;
  /**
   * Called on the upstream's `notifications/tools/list_changed` (startProxy re-lists the upstream
   * and updates `tools`). Without it the tool list stays as it was at start.
   */
  readonly onToolsChanged?: () => void;
}

/**
 * The proxy's MCP server: `tools/list` shows only what the grant may call, every `tools/call` goes
 * through `ledger.invoke` (the tool's `run` forwards it upstream), and the relay (relay/) carries
 * the rest: resources, prompts, completions, logging and ping when the upstream offers them, its
 * notifications, and its sampling, elicitation and roots requests during a call to this client.
 */
export function createProxyServer(options: ProxyServerOptions): Server {
  const { ledger, token, upstream, tools } = options;
  const report = options.report ?? (() => undefined);
  const upstreamCapabilities = upstream.getServerCapabilities() ?? {};
  const listChanged = options.onToolsChanged !== undefined && upstreamCapabilities.tools?.listChanged === true;
  const capabilities: ServerCapabilities = { tools: { listChanged }, ...relayedServerCapabilities(upstreamCapabilities) };
  const instructions = upstream.getInstructions();
  const server = new Server({ name: 'atc-proxy', version: options.version }, { capabilities, ...(instructions !== undefined ? { instructions } : {}) });

  server.setRequestHandler(ListToolsRequestSchema, () => {
    const visible = new Set(visibleToolNames(ledger, token));
    return { tools: Array.from(tools.registered.values()).filter((t) => visible.has(t.name)) };
  });

  // The proxy serves one client: every call in flight is this session's.
  const router = new CallRouter();
  const session: RelaySession = { id: 'client', clientCapabilities: () => server.getClientCapabilities() };
  const revocations = revocationWatch(ledger, options.revocationPollMs ?? 250);
  const telemetry = options.telemetry ?? noTelemetry;
  server.setRequestHandler(CallToolRequestSchema, (request, extra): Promise<CallToolResult> =>
    telemetry.serverRequest({ method: 'tools/call', target: request.params.name, meta: request.params._meta, requestId: extra.requestId, ...(extra.sessionId !== undefined ? { sessionId: extra.sessionId } : {}) }, () => callTool(request, extra)),
  );
  async function callTool(request: CallToolRequest, extra: CallToolExtra): Promise<CallToolResult> {
    const name = request.params.name;
    const refusal = tools.refused.get(name);
    if (refusal !== undefined) {
      report(`${toolLabel(name)} refused: ${printable(refusal)}`);
      return refusedToolResult(name, refusal);
    }
    const relay = { progressToken: request.params._meta?.progressToken, sendNotification: extra.sendNotification };
    revocations.start();
    const leave = router.enter({ session, sendRequest: extra.sendRequest, sendNotification: extra.sendNotification });
    const args = request.params.arguments ?? {};
    const asking = { ledger, clientCapabilities: server.getClientCapabilities(), extra, call: { grantId: options.grantId, tool: name, args }, approver: options.approver ?? defaultMcpApprover, report };
    const invoke = (): Promise<InvokeOutcome<CallToolResult>> => withApprovalElicitation(asking, () => ledger.invoke<CallToolResult>(token, name, args, { signal: extra.signal }));
    const outcome = await runWithRelay(relay, invoke).finally(() => {
      leave();
      revocations.stop();
    });
    return toolCallResult(outcome, name, extra.signal.aborted, report);
  }

  relayDownstreamRequests(server, upstream);
  relayUpstreamRequests({ upstream, router, report });
  relayUpstreamNotifications({
    upstream,
    router,
    audience: (notification) => server.notification(notification),
    onToolsChanged: options.onToolsChanged ?? (() => undefined),
  });
  // The client's roots changed: the upstream may ask again (during a call).
  server.setNotificationHandler(RootsListChangedNotificationSchema, () => upstream.sendRootsListChanged().catch(() => undefined));
  return server;
}

/**
 * While calls run, reads the shared log now and then so another process's revocation (with --abort)
 * reaches them. One timer, re-armed while calls are running and left to lapse when none is: starting
 * and clearing an interval around every call cost more than the call's own decision.
 */
function revocationWatch(ledger: Ledger, intervalMs: number): { start(): void; stop(): void } {
  let running = 0;
  let timer: NodeJS.Timeout | undefined;
  const tick = (): void => {
    if (running === 0) {
      timer = undefined;
      return;
    }
    try {
      ledger.inFlight();
    } catch {
      // A busy or closed store: the next tick or the next command tries again.
    }
    timer?.refresh();
  };
  return {
    start() {
      running++;
      if (timer === undefined) {
        timer = setTimeout(tick, intervalMs);
        timer.unref();
      }
    },
    stop() {
      running--;
    },
  };
}

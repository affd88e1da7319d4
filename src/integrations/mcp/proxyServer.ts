import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  PingRequestSchema,
  ResultSchema,
  type CallToolResult,
  type JSONRPCRequest,
  type ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import type { Ledger } from '../../stream/types';
import { visibleToolNames } from '../visibleTools';
import { runWithRelay } from './callRelay';
import { printable } from './printable';
import { toolCallResult, toolLabel } from './callOutcome';
import { refusedToolResult } from './callResults';
import { withoutLedgerMeta } from './upstreamMeta';
import type { UpstreamToolSet } from './upstreamTools';

export interface ProxyServerOptions {
  readonly ledger: Ledger;
  /** The agent's grant token: used for `invoke` and `tools/list`, never sent upstream. */
  readonly token: string;
  readonly upstream: Client;
  readonly tools: UpstreamToolSet;
  readonly version: string;
  /** One line per decision (tool name, outcome, reason, call id; never a token or an argument value). */
  readonly report?: (line: string) => void;
  /** How often, while calls run, the shared log is read for other processes' revocations. Default 250. */
  readonly revocationPollMs?: number;
}

/** Requests forwarded as they are, each only when the upstream offers its capability. */
const forwarded: { readonly [method: string]: keyof ServerCapabilities } = {
  'resources/list': 'resources',
  'resources/templates/list': 'resources',
  'resources/read': 'resources',
  'resources/subscribe': 'resources',
  'resources/unsubscribe': 'resources',
  'prompts/list': 'prompts',
  'prompts/get': 'prompts',
  'completion/complete': 'completions',
  'logging/setLevel': 'logging',
};

/**
 * The proxy's MCP server: `tools/list` shows only what the grant may call, every `tools/call` goes
 * through `ledger.invoke` (the tool's `run` forwards it upstream), and resources, prompts,
 * completions, logging and ping are forwarded when the upstream offers them.
 */
export function createProxyServer(options: ProxyServerOptions): Server {
  const { ledger, token, upstream, tools } = options;
  const report = options.report ?? (() => undefined);
  const upstreamCapabilities = upstream.getServerCapabilities() ?? {};
  const capabilities: ServerCapabilities = { tools: { listChanged: false } };
  for (const key of ['resources', 'prompts', 'completions', 'logging'] as const) {
    if (upstreamCapabilities[key] !== undefined) Object.assign(capabilities, { [key]: upstreamCapabilities[key] });
  }
  const instructions = upstream.getInstructions();
  const server = new Server({ name: 'atc-proxy', version: options.version }, { capabilities, ...(instructions !== undefined ? { instructions } : {}) });

  server.setRequestHandler(ListToolsRequestSchema, () => {
    const visible = new Set(visibleToolNames(ledger, token));
    return { tools: Array.from(tools.registered.values()).filter((t) => visible.has(t.name)) };
  });

  const revocations = revocationWatch(ledger, options.revocationPollMs ?? 250);
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const name = request.params.name;
    const refusal = tools.refused.get(name);
    if (refusal !== undefined) {
      report(`${toolLabel(name)} refused: ${printable(refusal)}`);
      return refusedToolResult(name, refusal);
    }
    const relay = { progressToken: request.params._meta?.progressToken, sendNotification: extra.sendNotification };
    revocations.start();
    const outcome = await runWithRelay(relay, () => ledger.invoke<CallToolResult>(token, name, request.params.arguments ?? {}, { signal: extra.signal })).finally(() => revocations.stop());
    return toolCallResult(outcome, name, extra.signal.aborted, report);
  });

  server.removeRequestHandler('ping');
  server.setRequestHandler(PingRequestSchema, async (_request, extra) => {
    await upstream.ping({ signal: extra.signal });
    return {};
  });

  server.fallbackRequestHandler = async (request: JSONRPCRequest, extra) => {
    const capability = forwarded[request.method];
    if (capability === undefined || upstreamCapabilities[capability] === undefined) throw new McpError(ErrorCode.MethodNotFound, `method not found: ${request.method}`);
    const result = await upstream.request({ method: request.method, ...(request.params !== undefined ? { params: request.params } : {}) }, ResultSchema, { signal: extra.signal });
    return withoutLedgerMeta(result);
  };
  // The upstream's own notifications (resources updated, list changes, log messages) reach the client.
  upstream.fallbackNotificationHandler = async (notification) => {
    if (notification.method === 'notifications/tools/list_changed') return; // the proxy's tool list is fixed at start
    await server.notification(notification as never).catch(() => undefined);
  };
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

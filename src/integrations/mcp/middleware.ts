import { AsyncLocalStorage } from 'node:async_hooks';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type ServerNotification,
  type ServerRequest,
  type Tool,
  type ToolAnnotations,
} from '@modelcontextprotocol/sdk/types.js';
import type { JsonObject } from '../../domain/json';
import type { Ledger, ToolContext } from '../../stream/types';
import { visibleToolNames } from '../visibleTools';
import { rejectionResult, withCallId } from './callResults';

export type McpRequestExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** What a guarded tool's `run` receives besides its arguments: the ledger's context and the MCP request's. */
export interface McpToolContext extends ToolContext {
  /** The MCP request (send progress with `extra.sendNotification`, read `extra.authInfo`, …). */
  readonly extra: McpRequestExtra;
}

export interface LedgerToolConfig<Args extends JsonObject = JsonObject> {
  readonly title?: string;
  readonly description?: string;
  /** JSON Schema for the arguments object (the ledger refuses undeclared properties). */
  readonly inputSchema: JsonObject;
  readonly annotations?: ToolAnnotations;
  /** Virtual resources the call touches (checked against the grant's scopes in canonical form). */
  readonly resources?: (args: Args) => readonly string[];
}

export interface LedgerMcpOptions {
  /** The token of a request. Default: `extra.authInfo?.token` (what the SDK's bearer-auth middleware sets). */
  readonly tokenOf?: (extra: McpRequestExtra) => string | undefined;
}

export interface LedgerMcpTools {
  /** Registers a tool with the ledger and serves it on the McpServer behind the ledger. */
  registerTool<Args extends JsonObject = JsonObject>(
    name: string,
    config: LedgerToolConfig<Args>,
    run: (args: Args, ctx: McpToolContext) => CallToolResult | Promise<CallToolResult>,
  ): Promise<void>;
}

const requestExtra = new AsyncLocalStorage<McpRequestExtra>();

/**
 * Puts an `McpServer`'s tools behind the ledger: call before connecting it, and register every tool
 * through the returned `registerTool` (the server's own `registerTool` then fails loudly, so no tool
 * bypasses the ledger). Each request's token comes from `tokenOf(extra)`; `tools/list` shows only the
 * tools that token may call now, and `tools/call` goes through `ledger.invoke` (a client's
 * cancellation aborts `ctx.signal` and settles the call `cancelled: true`). A rejection is a tool
 * result `isError: true`, text `rejected: <reason>: …`, `_meta: { "atc/reason", "atc/callId" }`.
 */
export function ledgerMcpTools(server: McpServer, ledger: Ledger, options: LedgerMcpOptions = {}): LedgerMcpTools {
  const low = server.server;
  try {
    low.assertCanSetRequestHandler('tools/list');
    low.assertCanSetRequestHandler('tools/call');
  } catch {
    throw new TypeError('this McpServer already serves tools: register every tool through ledgerMcpTools, before any other');
  }
  const tokenOf = options.tokenOf ?? ((extra: McpRequestExtra) => extra.authInfo?.token);
  const tools = new Map<string, Tool>();
  low.registerCapabilities({ tools: { listChanged: true } });

  low.setRequestHandler(ListToolsRequestSchema, (_request, extra) => {
    const token = tokenOf(extra);
    if (token === undefined) return { tools: [] };
    const visible = new Set(visibleToolNames(ledger, token));
    return { tools: Array.from(tools.values()).filter((t) => visible.has(t.name)) };
  });

  low.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    // An absent token is presented as '' so the refusal is decided and logged (unknown_token) like any other.
    const token = tokenOf(extra) ?? '';
    const outcome = await requestExtra.run(extra, () => ledger.invoke<CallToolResult>(token, request.params.name, request.params.arguments ?? {}, { signal: extra.signal }));
    if (outcome.status === 'rejected') return rejectionResult(outcome);
    if (outcome.status === 'completed') return withCallId(outcome.value, outcome.callId);
    const message = outcome.error instanceof Error ? outcome.error.message : 'the tool failed';
    return { content: [{ type: 'text', text: message }], isError: true, _meta: { 'atc/callId': outcome.callId } };
  });

  return {
    async registerTool(name, config, run) {
      if (tools.has(name)) throw new TypeError(`tool ${name} is already registered`);
      await ledger.registerTool({
        name,
        inputSchema: config.inputSchema,
        ...(config.resources !== undefined ? { resources: config.resources } : {}),
        run: (args, ctx) => {
          const extra = requestExtra.getStore();
          if (extra === undefined) throw new Error('a guarded MCP tool runs only through its McpServer');
          // The ledger's context (signal, ids, checked resource helpers) plus the MCP request's extra.
          const mcpCtx: McpToolContext = {
            get signal() { return ctx.signal; },
            callId: ctx.callId,
            grantId: ctx.grantId,
            extra,
            open: (path, flags) => ctx.open(path, flags),
            readdir: (path) => ctx.readdir(path),
            writeFile: (path, data) => ctx.writeFile(path, data),
            rename: (from, to) => ctx.rename(from, to),
            fetch: (url, init) => ctx.fetch(url, init),
            report: (usage) => ctx.report(usage),
          };
          return run(args as never, mcpCtx);
        },
      });
      tools.set(name, {
        name,
        inputSchema: config.inputSchema as Tool['inputSchema'],
        ...(config.title !== undefined ? { title: config.title } : {}),
        ...(config.description !== undefined ? { description: config.description } : {}),
        ...(config.annotations !== undefined ? { annotations: config.annotations } : {}),
      });
      if (low.transport !== undefined) void low.sendToolListChanged().catch(() => undefined);
    },
  };
}

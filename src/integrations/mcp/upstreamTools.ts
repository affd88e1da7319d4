import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { JsonObject } from '../../domain/json';
import { InvalidCommandError } from '../../stream/invalidCommandError';
import type { Ledger, ResourceCall } from '../../stream/types';
import { currentRelay, type CallRelay } from './callRelay';
import type { ResourceMapping } from './resourceMapping';
import { withoutAtcMeta } from './relay/sanitize';
import type { McpTelemetry } from './telemetry';

/** An upstream result with `isError: true`: the tool ran and reported a failure (settled `call.failed`). */
export class UpstreamToolError extends Error {
  override readonly name = 'UpstreamToolError';
  constructor(readonly result: CallToolResult) {
    super('the upstream tool returned isError: true');
  }
}

export interface UpstreamToolSet {
  /** Registered with the ledger: callable through it (if the grant allows). */
  readonly registered: ReadonlyMap<string, Tool>;
  /** Not registered, with why (a schema that changed since the log registered it, a bad name…). */
  readonly refused: ReadonlyMap<string, string>;
}

/** The set as the relay keeps it up to date (relay/toolList.ts): the same maps, writable. */
export interface LiveToolSet extends UpstreamToolSet {
  readonly registered: Map<string, Tool>;
  readonly refused: Map<string, string>;
  /** Every tool this process attached to the ledger, as it was attached (its run forwards under this name). */
  readonly attached: Map<string, Tool>;
}

export interface ForwardOptions {
  /** Per upstream request; the SDK's default is 60 s. Progress resets it. */
  readonly timeoutMs?: number;
  /** A client span per upstream call, its trace context sent in the request's `_meta` (`--otel`). */
  readonly telemetry?: McpTelemetry;
}

/** Maps a call's arguments to the resources it names (per grant: `call` is the grant it acts for). */
export interface ResourceMapper {
  resources(tool: string, args: JsonObject, call: ResourceCall): string[];
}

/** How a host registers upstream tools: under which name, and how each call reaches the upstream. */
export interface ToolRoute {
  /** The name the ledger registers (and clients see) for an upstream tool. */
  readonly nameOf: (tool: Tool) => string;
  readonly run: (tool: Tool, args: JsonObject, signal: AbortSignal) => Promise<CallToolResult>;
}

/**
 * Registers every upstream tool with the ledger, each `run` forwarding the call to the upstream
 * once (never re-sent), with the call's `ctx.signal` (so a cancellation or an aborting revocation
 * reaches the upstream as `notifications/cancelled`) and progress relayed to the client.
 */
export async function registerUpstreamTools(ledger: Ledger, client: Client, tools: readonly Tool[], mapping: ResourceMapping, options: ForwardOptions = {}): Promise<LiveToolSet> {
  const set: LiveToolSet = { registered: new Map(), refused: new Map(), attached: new Map() };
  for (const tool of tools) {
    if (set.registered.has(tool.name) || set.refused.has(tool.name)) {
      set.refused.set(tool.name, 'the upstream lists this name twice');
      set.registered.delete(tool.name);
      continue;
    }
    const refusal = await attachUpstreamTool(ledger, client, tool, mapping, options);
    if (refusal === undefined) {
      set.registered.set(tool.name, tool);
      set.attached.set(tool.name, tool);
    } else set.refused.set(tool.name, refusal);
  }
  return set;
}

/** Registers one upstream tool with the ledger; resolves why not, if it was refused. */
export async function attachUpstreamTool(ledger: Ledger, client: Client, tool: Tool, mapping: ResourceMapping, options: ForwardOptions): Promise<string | undefined> {
  try {
    await ledger.registerTool({
      name: tool.name,
      inputSchema: tool.inputSchema as JsonObject,
      resources: (args) => mapping.resources(tool.name, args),
      run: (args, ctx) => forwardToolCall(client, tool.name, args, ctx.signal, options, currentRelay()),
    });
    return undefined;
  } catch (error) {
    const changed = error instanceof InvalidCommandError && error.code === 'tool_conflict';
    return changed ? `the upstream's inputSchema for ${tool.name} changed since the log registered it (a changed tool needs a new name)` : (error as Error).message;
  }
}

/**
 * Registers upstream tools under the route's names (the gateway's `<upstream>__<tool>`). A name
 * listed twice, or refused by the ledger (a changed schema, a bad name), is refused, with why.
 */
export async function registerRoutedTools(ledger: Ledger, tools: readonly Tool[], mapping: ResourceMapper, route: ToolRoute): Promise<LiveToolSet> {
  const set: LiveToolSet = { registered: new Map(), refused: new Map(), attached: new Map() };
  for (const tool of tools) {
    const name = route.nameOf(tool);
    if (set.registered.has(name) || set.refused.has(name)) {
      set.refused.set(name, 'the upstream lists this name twice');
      set.registered.delete(name);
      continue;
    }
    const refusal = await attachRoutedTool(ledger, tool, name, mapping, route);
    if (refusal !== undefined) set.refused.set(name, refusal);
    else {
      set.registered.set(name, name === tool.name ? tool : { ...tool, name });
      set.attached.set(name, tool);
    }
  }
  return set;
}

/** Registers one upstream tool under `name`, its calls run by the route; resolves why not, if it was refused. */
export async function attachRoutedTool(ledger: Ledger, tool: Tool, name: string, mapping: ResourceMapper, route: Pick<ToolRoute, 'run'>): Promise<string | undefined> {
  try {
    await ledger.registerTool({
      name,
      inputSchema: tool.inputSchema as JsonObject,
      resources: (args, call) => mapping.resources(name, args, call),
      run: (args, ctx) => route.run(tool, args, ctx.signal),
    });
    return undefined;
  } catch (error) {
    const changed = error instanceof InvalidCommandError && error.code === 'tool_conflict';
    return changed ? `the upstream's inputSchema for ${name} changed since the log registered it (a changed tool needs a new name)` : (error as Error).message;
  }
}

/** Forwards one call upstream (never re-sent), progress relayed when the client asked for it. */
export async function forwardToolCall(client: Client, name: string, args: JsonObject, signal: AbortSignal, options: ForwardOptions, relay: CallRelay | undefined): Promise<CallToolResult> {
  const progressToken = relay?.progressToken;
  // Relayed progress is sent before the result (the client drops progress that follows its response).
  let relayed: Promise<void> = Promise.resolve();
  const send = (meta: Readonly<Record<string, string>>): Promise<CallToolResult> =>
    client.request({ method: 'tools/call', params: { name, arguments: args, ...(Object.keys(meta).length > 0 ? { _meta: meta } : {}) } }, CallToolResultSchema, {
      signal,
      resetTimeoutOnProgress: true,
      ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
      ...(relay !== undefined && progressToken !== undefined
        ? { onprogress: (progress) => void (relayed = relayed.then(() => relay.sendNotification({ method: 'notifications/progress', params: { ...progress, progressToken } })).catch(() => undefined)) }
        : {}),
    });
  const result = options.telemetry === undefined ? await send({}) : await options.telemetry.upstreamRequest({ method: 'tools/call', target: name }, send);
  await relayed;
  // An upstream may not write the ledger's own `_meta` keys (it could forge a decision).
  const clean = withoutAtcMeta(result);
  if (clean.isError === true) throw new UpstreamToolError(clean);
  return clean;
}

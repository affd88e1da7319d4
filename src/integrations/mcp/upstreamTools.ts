import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { JsonObject } from '../../domain/json';
import { InvalidCommandError } from '../../stream/invalidCommandError';
import type { Ledger } from '../../stream/types';
import { currentRelay } from './callRelay';
import type { ResourceMapping } from './resourceMapping';
import { withoutAtcMeta } from './relay/sanitize';

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
      run: (args, ctx) => forward(client, tool.name, args, ctx.signal, options),
    });
    return undefined;
  } catch (error) {
    const changed = error instanceof InvalidCommandError && error.code === 'tool_conflict';
    return changed ? `the upstream's inputSchema for ${tool.name} changed since the log registered it (a changed tool needs a new name)` : (error as Error).message;
  }
}

async function forward(client: Client, name: string, args: JsonObject, signal: AbortSignal, options: ForwardOptions): Promise<CallToolResult> {
  const relay = currentRelay();
  const progressToken = relay?.progressToken;
  // Relayed progress is sent before the result (the client drops progress that follows its response).
  let relayed: Promise<void> = Promise.resolve();
  const result = await client.request({ method: 'tools/call', params: { name, arguments: args } }, CallToolResultSchema, {
    signal,
    resetTimeoutOnProgress: true,
    ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
    ...(relay !== undefined && progressToken !== undefined
      ? { onprogress: (progress) => void (relayed = relayed.then(() => relay.sendNotification({ method: 'notifications/progress', params: { ...progress, progressToken } })).catch(() => undefined)) }
      : {}),
  });
  await relayed;
  // An upstream may not write the ledger's own `_meta` keys (it could forge a decision).
  const clean = withoutAtcMeta(result);
  if (clean.isError === true) throw new UpstreamToolError(clean);
  return clean;
}

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { JsonObject } from '../../domain/json';
import { InvalidCommandError } from '../../stream/invalidCommandError';
import type { Ledger } from '../../stream/types';
import { currentRelay } from './callRelay';
import type { ResourceMapping } from './resourceMapping';
import { withoutLedgerMeta } from './upstreamMeta';

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

export interface ForwardOptions {
  /** Per upstream request; the SDK's default is 60 s. Progress resets it. */
  readonly timeoutMs?: number;
}

/**
 * Registers every upstream tool with the ledger, each `run` forwarding the call to the upstream
 * once (never re-sent), with the call's `ctx.signal` (so a cancellation or an aborting revocation
 * reaches the upstream as `notifications/cancelled`) and progress relayed to the client.
 */
export async function registerUpstreamTools(ledger: Ledger, client: Client, tools: readonly Tool[], mapping: ResourceMapping, options: ForwardOptions = {}): Promise<UpstreamToolSet> {
  const registered = new Map<string, Tool>();
  const refused = new Map<string, string>();
  for (const tool of tools) {
    if (registered.has(tool.name) || refused.has(tool.name)) {
      refused.set(tool.name, 'the upstream lists this name twice');
      registered.delete(tool.name);
      continue;
    }
    try {
      await ledger.registerTool({
        name: tool.name,
        inputSchema: tool.inputSchema as JsonObject,
        resources: (args) => mapping.resources(tool.name, args),
        run: (args, ctx) => forward(client, tool.name, args, ctx.signal, options),
      });
      registered.set(tool.name, tool);
    } catch (error) {
      const changed = error instanceof InvalidCommandError && error.code === 'tool_conflict';
      refused.set(tool.name, changed ? `the upstream's inputSchema for ${tool.name} changed since the log registered it (a changed tool needs a new name)` : (error as Error).message);
    }
  }
  return { registered, refused };
}

async function forward(client: Client, name: string, args: JsonObject, signal: AbortSignal, options: ForwardOptions): Promise<CallToolResult> {
  const relay = currentRelay();
  const progressToken = relay?.progressToken;
  // Relayed progress is sent before the result (the client drops progress that follows its response).
  let relayed: Promise<void> = Promise.resolve();
  const received = await client.request({ method: 'tools/call', params: { name, arguments: args } }, CallToolResultSchema, {
    signal,
    resetTimeoutOnProgress: true,
    ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
    ...(relay !== undefined && progressToken !== undefined
      ? { onprogress: (progress) => void (relayed = relayed.then(() => relay.sendNotification({ method: 'notifications/progress', params: { ...progress, progressToken } })).catch(() => undefined)) }
      : {}),
  });
  await relayed;
  // Only the ledger writes `atc/` keys: an upstream's could forge a rejection.
  const result = withoutLedgerMeta(received);
  if (result.isError === true) throw new UpstreamToolError(result);
  return result;
}

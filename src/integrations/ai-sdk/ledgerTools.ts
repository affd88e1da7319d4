import { jsonSchema, tool, type Tool, type ToolSet } from 'ai';
import type { JsonObject } from '../../domain/json';
import type { RejectReason } from '../../domain/reasons';
import type { Ledger } from '../../stream/types';

export interface LedgerToolsOptions {
  /** What the model reads about each tool (the ledger keeps no descriptions). */
  readonly descriptions?: { readonly [tool: string]: string };
}

/** Thrown by a ledger tool's `execute` for a rejection: the AI SDK hands its message to the model as the tool error. */
export class LedgerRejectionError extends Error {
  override readonly name = 'LedgerRejectionError';
  constructor(readonly reason: RejectReason, readonly callId: string, detail: string) {
    super(`rejected: ${reason}: ${detail}`);
  }
}

/**
 * AI SDK (ai 6) tools for the tools this token may call now (`ledger.visibleTools`): the others are
 * absent. Each `execute` goes through `ledger.invoke` with the step's abort signal (an aborted
 * generation settles the call `cancelled: true`); a rejection throws `LedgerRejectionError`, which
 * the AI SDK turns into a tool error the model sees, reason first. The input schema is the tool's
 * registered JSON Schema; the ledger validates arguments, the AI SDK does not.
 */
export function ledgerTools(ledger: Ledger, token: string, options: LedgerToolsOptions = {}): ToolSet {
  const tools: Record<string, Tool<JsonObject, unknown>> = {};
  for (const visible of ledger.visibleTools(token)) {
    const name = visible.name;
    const description = options.descriptions?.[name];
    tools[name] = tool<JsonObject, unknown>({
      ...(description !== undefined ? { description } : {}),
      inputSchema: jsonSchema<JsonObject>(visible.inputSchema as Parameters<typeof jsonSchema>[0]),
      execute: async (input, { abortSignal }) => {
        const outcome = await ledger.invoke(token, name, input, abortSignal !== undefined ? { signal: abortSignal } : {});
        if (outcome.status === 'completed') return outcome.value;
        if (outcome.status === 'rejected') throw new LedgerRejectionError(outcome.reason, outcome.callId, outcome.message);
        throw outcome.error;
      },
    });
  }
  return tools;
}

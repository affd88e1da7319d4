import { jsonSchema, tool, type ModelMessage, type Tool, type ToolSet } from 'ai';
import type { JsonObject } from '../../domain/json';
import type { RejectReason } from '../../domain/reasons';
import type { InvokeOutcome, Ledger } from '../../stream/types';
import { ToolApprovals } from './toolApprovals';

export interface LedgerToolsOptions {
  /** What the model reads about each tool (the ledger keeps no descriptions). */
  readonly descriptions?: { readonly [tool: string]: string };
  /** Recorded as `by` when an approval response is applied. Default `ai-sdk-app`. */
  readonly approver?: string;
}

/** `ledgerTools` with its approval binding: deny refused calls, look up the ledger's approval ids. */
export interface LedgerToolsWithApprovals {
  readonly tools: ToolSet;
  /** Denies through the ledger the calls the app's tool-approval-responses refused (call before the next generateText). */
  applyApprovalResponses(messages: readonly ModelMessage[]): Promise<number>;
  /** The ledger's approval id of a tool call waiting for a person. */
  approvalIdOf(toolCallId: string): string | undefined;
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
  return ledgerToolsWithApprovals(ledger, token, options).tools;
}

/**
 * `ledgerTools` plus the approval binding (docs/approvals.md, "AI SDK"): a tool call the grant's
 * approval rules ask about is marked `needsApproval`, its ledger call waits under the ledger's
 * approval id, `execute` (the app approved) approves that id, and `applyApprovalResponses` denies
 * the refused ones.
 */
export function ledgerToolsWithApprovals(ledger: Ledger, token: string, options: LedgerToolsOptions = {}): LedgerToolsWithApprovals {
  const approvals = new ToolApprovals(ledger, token, options.approver ?? 'ai-sdk-app');
  const tools: Record<string, Tool<JsonObject, unknown>> = {};
  for (const visible of ledger.visibleTools(token)) {
    const name = visible.name;
    const description = options.descriptions?.[name];
    tools[name] = tool<JsonObject, unknown>({
      ...(description !== undefined ? { description } : {}),
      inputSchema: jsonSchema<JsonObject>(visible.inputSchema as Parameters<typeof jsonSchema>[0]),
      needsApproval: (input, { toolCallId, messages }) => approvals.needsApproval(name, input, toolCallId, messages),
      execute: async (input, { abortSignal, toolCallId }) => {
        const approved = await approvals.approvedOutcome(name, input, toolCallId);
        return valueOf(approved ?? (await ledger.invoke(token, name, input, abortSignal !== undefined ? { signal: abortSignal } : {})));
      },
    });
  }
  return { tools, applyApprovalResponses: (messages) => approvals.applyApprovalResponses(messages), approvalIdOf: (id) => approvals.approvalIdOf(id) };
}

function valueOf(outcome: InvokeOutcome<unknown>): unknown {
  if (outcome.status === 'completed') return outcome.value;
  if (outcome.status === 'rejected') throw new LedgerRejectionError(outcome.reason, outcome.callId, outcome.message);
  throw outcome.error;
}

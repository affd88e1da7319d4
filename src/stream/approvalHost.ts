import type { ApprovalOutcome } from '../domain/events';
import type { ResolveApprovalCommand } from '../domain/commands';
import { approvalNoteProblem, approverProblem } from '../domain/approvalSpec';
import { shardValues } from '../domain/shardedMap';
import type { LedgerState } from '../domain/state';
import { InvalidCommandError } from './invalidCommandError';
import type { JsonObject } from '../domain/json';
import type { SchemaCompiler } from '../tools/schemas';
import { undeclaredNarrowedProperty } from '../tools/declaredProperties';
import type { ApprovalRefusal, PendingApprovalView } from './approvalTypes';

// The host's side of approvals, outside the ledger facade: reading pending ones from the state,
// checking a person's decision before it is queued, and telling a refusal from a failure.

/** The pending approvals of a state, oldest first, as the host sees them. */
export function pendingApprovalViews(state: LedgerState): readonly PendingApprovalView[] {
  if (state.approvals === undefined) return Object.freeze([]);
  const pending = Array.from(shardValues(state.approvals)).sort((a, b) => a.seq - b.seq);
  return Object.freeze(pending.map((p) => Object.freeze({ approvalId: p.approvalId, callId: p.callId, grantId: p.grantId, tool: p.tool, argsDigest: p.argsDigest, requestedAt: p.requestedAt, deadline: p.deadline })));
}

/**
 * A person's decision as a command (without its time): malformed input fails loudly here (host
 * input), before anything is queued; `at` is added in the serialized step.
 */
export function personDecision(approvalId: unknown, outcome: Exclude<ApprovalOutcome, 'timed_out'>, options: unknown, noteField: 'note' | 'reason'): Omit<ResolveApprovalCommand, 'at'> {
  if (typeof approvalId !== 'string') throw new TypeError(`${outcome === 'approved' ? 'approve' : 'deny'} needs an approval id`);
  if (options === null || typeof options !== 'object') throw new TypeError('the decision needs an options object with `by`');
  const by = (options as { by?: unknown }).by;
  const note = (options as Record<string, unknown>)[noteField];
  const problem = approverProblem(by) ?? approvalNoteProblem(note);
  if (problem !== undefined) throw new TypeError(problem);
  return note === undefined ? { type: 'resolveApproval', approvalId, outcome, by: by as string } : { type: 'resolveApproval', approvalId, outcome, by: by as string, note: note as string };
}

const refusals: ReadonlySet<string> = new Set<ApprovalRefusal>(['unknown_approval', 'approval_resolved', 'approval_expired']);

/** The refusal a decided-against approval command ended in, or undefined for any other error (rethrown). */
export function approvalRefusal(error: unknown): ApprovalRefusal | undefined {
  return error instanceof InvalidCommandError && refusals.has(error.code) ? (error.code as ApprovalRefusal) : undefined;
}

/**
 * What is wrong with approval rules whose schemas must compile (as narrowings, under the host's or
 * the agent's bounds) and name only properties the tool declares (else they would match every call
 * or none for a reason nobody meant); undefined when they are fine. Shape errors are `decide`'s.
 */
export function approvalRulesCompileProblem(compiler: SchemaCompiler, rules: JsonObject, who: 'host' | 'agent', inputSchemaOf: (tool: string) => JsonObject | undefined): string | undefined {
  for (const [tool, value] of Object.entries(rules)) {
    if (value === true) continue;
    const name = `approvals[${JSON.stringify(tool).slice(0, 140)}]`;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return `${name} must be true or a JSON Schema object`;
    const rule = value as JsonObject;
    try {
      compiler.compileNarrowing(rule, who);
    } catch (error) {
      return `${name} does not compile: ${(error as Error).message.slice(0, 300)}`;
    }
    const schema = inputSchemaOf(tool);
    const undeclared = schema === undefined ? undefined : undeclaredNarrowedProperty(schema, rule);
    if (undeclared !== undefined) return `${name} names property ${JSON.stringify(undeclared).slice(0, 140)}, which the inputSchema of tool ${JSON.stringify(tool).slice(0, 140)} does not declare`;
  }
  return undefined;
}

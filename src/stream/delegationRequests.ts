import type { AttenuationRequest as CheckedRequest } from '../domain/commands';
import { delegationRejectMessage } from '../domain/delegationReasons';
import type { LedgerEvent } from '../domain/events';
import type { JsonObject } from '../domain/json';
import { limits } from '../domain/limits';
import { parseNarrowing } from '../domain/narrowing';
import { snapshotArguments } from '../tools/arguments';
import type { SchemaCompiler } from '../tools/schemas';
import { undeclaredNarrowingProblem } from './narrowingChecks';
import { approvalRulesCompileProblem } from './approvalHost';
import type { AttenuateOutcome, RevokeDelegationOutcome } from './types';

// The shell's side of an agent's delegation requests: bound and snapshot the hostile request, run
// the checks that need host code (ajv), and turn the decided events into the agent's outcome.

const unavailableMessage = 'the ledger could not record the decision (store failure, closed, or too many pending commands)';
export const attenuationUnavailable: AttenuateOutcome = Object.freeze({ status: 'rejected', reason: 'ledger_unavailable', message: unavailableMessage });
export const revocationUnavailable: RevokeDelegationOutcome = Object.freeze({ status: 'rejected', reason: 'ledger_unavailable', message: unavailableMessage });

/** The request as the decider takes it, and (when malformed) what the agent is told is wrong. */
export function checkAttenuationRequest(compiler: SchemaCompiler, raw: unknown, inputSchemaOf: (tool: string) => JsonObject | undefined): { readonly request: CheckedRequest; readonly problem?: string } {
  const invalid = (problem: string) => ({ request: { kind: 'invalid' } as const, problem });
  if (raw === undefined) return { request: { kind: 'narrowing', narrowing: {} } };
  // The same bounded, getter-safe snapshot as a call's arguments; then a tighter size bound.
  const snapshot = snapshotArguments(raw);
  if (!snapshot.ok) return invalid('the request must be a plain JSON object');
  if (snapshot.bytes > limits.attenuationBytesMax) return invalid(`the request may be at most ${limits.attenuationBytesMax} bytes of canonical JSON`);
  const parsed = parseNarrowing(snapshot.value);
  if (!parsed.ok) return invalid(parsed.problem);
  for (const [tool, schema] of Object.entries(parsed.narrowing.args ?? {})) {
    try {
      compiler.compileNarrowing(schema, 'agent');
    } catch (error) {
      // The compiler's messages name the agent's own schema (keywords, paths, its patterns), never a token.
      return invalid(`args[${JSON.stringify(tool).slice(0, 140)}] does not compile: ${(error as Error).message.slice(0, 300)}`);
    }
    const undeclared = undeclaredNarrowingProblem(inputSchemaOf(tool), tool, schema);
    if (undeclared !== undefined) return invalid(undeclared);
  }
  // An agent's approval rules are matched on its calls: compiled under the agent's bounds too.
  const approvals = parsed.narrowing.approvals;
  const approvalProblem = approvals === undefined ? undefined : approvalRulesCompileProblem(compiler, approvals as JsonObject, 'agent', inputSchemaOf);
  if (approvalProblem !== undefined) return invalid(approvalProblem);
  return { request: { kind: 'narrowing', narrowing: parsed.narrowing } };
}

export function attenuateOutcome(events: readonly LedgerEvent[], child: { readonly grantId: string; readonly token: string }, problem: string | undefined): AttenuateOutcome {
  const event = events[0];
  if (event?.type === 'grant.issued' && event.grantId === child.grantId && event.parentGrantId !== undefined) {
    return { status: 'issued', grantId: child.grantId, token: child.token, parentGrantId: event.parentGrantId };
  }
  if (event?.type === 'attenuation.rejected') {
    const message = delegationRejectMessage(event.reason);
    return { status: 'rejected', reason: event.reason, message: event.reason === 'attenuation_invalid' && problem !== undefined ? `${message}: ${problem}` : message };
  }
  return attenuationUnavailable;
}

export function revokeDelegationOutcome(events: readonly LedgerEvent[]): RevokeDelegationOutcome {
  const event = events[0];
  if (event === undefined || event.type === 'grant.revoked') return { status: 'revoked' }; // none: already revoked
  if (event.type === 'revocation.rejected') return { status: 'rejected', reason: event.reason, message: delegationRejectMessage(event.reason) };
  return revocationUnavailable;
}

/** An agent-supplied grant id, kept only when it could name a grant (ids are short). */
export function targetGrantId(grantId: unknown): string | undefined {
  return typeof grantId === 'string' && grantId.length <= 128 ? grantId : undefined;
}

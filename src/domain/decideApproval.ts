import type { ApprovalAsk, ResolveApprovalCommand } from './commands';
import { emit, refuse, type Decision } from './decision';
import type { ApprovalRequestedPayload, ApprovalResolvedPayload, IdempotencyRequest, Reservation } from './events';
import { approvalNoteProblem, approverProblem, chainApprovalTimeout, chainCallTimeout, chainExpiry } from './approvalSpec';
import { ancestorRecords } from './grantChain';
import { shardGet } from './shardedMap';
import type { GrantRecord, LedgerState } from './state';

const isTimeoutMs = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value > 0;

/**
 * A call that passed every check and needs a person: logged as waiting, reserved along its chain
 * (the fold charges it as an admission), with a deadline of log time no later than the chain's expiry.
 * A keyed call binds its key now (the fold marks the binding waiting), so a retry while it waits
 * replays this call instead of asking a person again.
 */
export function approvalRequested(callId: string, tool: string, at: number, grant: GrantRecord, ancestors: readonly GrantRecord[], reserved: Reservation, ask: ApprovalAsk, key: IdempotencyRequest | undefined): Decision {
  if (typeof ask.approvalId !== 'string' || ask.approvalId.length === 0 || ask.approvalId.length > 128) return refuse('invalid_approval', 'an approval id is 1-128 characters');
  if (typeof ask.argsDigest !== 'string' || !/^[0-9a-f]{64}$/.test(ask.argsDigest)) return refuse('invalid_approval', 'argsDigest must be a SHA-256 in hex');
  const timeout = chainApprovalTimeout(grant, ancestors) ?? ask.defaultTimeoutMs;
  if (!isTimeoutMs(timeout)) return refuse('invalid_approval', 'the default approval timeout must be a positive safe integer (ms)');
  const deadline = Math.min(at + timeout, chainExpiry(grant, ancestors));
  const event: { -readonly [K in keyof ApprovalRequestedPayload]: ApprovalRequestedPayload[K] } = {
    type: 'approval.requested',
    approvalId: ask.approvalId,
    callId,
    grantId: grant.grantId,
    tool,
    argsDigest: ask.argsDigest,
    reserved,
    deadline,
  };
  if (grant.ancestors !== undefined) event.ancestors = grant.ancestors;
  if (key !== undefined) event.idempotency = { keyDigest: key.keyDigest, argsDigest: key.argsDigest, expiresAt: key.expiresAt };
  return emit(event);
}

/**
 * Resolves a pending approval. Refused when the id is unknown, already resolved (an approval is used
 * once), past its deadline (approve/deny), or, for the ledger's timeout, before it: a timeout is a
 * fact of log time, so a logged one dated early is a forgery `verify` finds.
 */
export function decideResolveApproval(state: LedgerState, command: ResolveApprovalCommand): Decision {
  const id = command.approvalId;
  const pending = typeof id === 'string' && state.approvals !== undefined ? shardGet(state.approvals, id) : undefined;
  if (pending === undefined) {
    const ended = typeof id === 'string' && state.approvalsEnded !== undefined ? shardGet(state.approvalsEnded, id) : undefined;
    return ended === undefined ? refuse('unknown_approval', 'no approval has that id') : refuse('approval_resolved', `the approval was already resolved (${ended})`);
  }
  const base = { type: 'approval.resolved' as const, approvalId: pending.approvalId, callId: pending.callId, grantId: pending.grantId, tool: pending.tool };
  if (command.outcome === 'timed_out') {
    if (command.at < pending.deadline) return refuse('approval_not_due', 'the approval has not reached its deadline');
    return emit({ ...base, outcome: 'timed_out' });
  }
  if (command.outcome !== 'approved' && command.outcome !== 'denied') return refuse('invalid_approval', 'outcome must be approved, denied or timed_out');
  if (command.at >= pending.deadline) return refuse('approval_expired', 'the approval is past its deadline');
  const problem = approverProblem(command.by) ?? approvalNoteProblem(command.note);
  if (problem !== undefined) return refuse('invalid_approval', problem);
  const event: { -readonly [K in keyof ApprovalResolvedPayload]: ApprovalResolvedPayload[K] } = { ...base, outcome: command.outcome, by: command.by as string };
  if (command.note !== undefined) event.note = command.note;
  if (command.outcome === 'approved') {
    // Admitted from now: a call timeout counts from the approval, not from the request.
    const grant = shardGet(state.grants, pending.grantId);
    const ancestors = grant === undefined ? undefined : ancestorRecords(state, grant);
    const timeout = grant === undefined || ancestors === undefined ? undefined : chainCallTimeout(grant, ancestors);
    if (timeout !== undefined) event.deadline = command.at + timeout;
  }
  return emit(event);
}

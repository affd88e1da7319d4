import type { EventOf } from './events';
import { shardValues } from './shardedMap';
import type { InFlightCall, LedgerState, PendingApproval } from './state';

// The records approval events create, for `applyEvent` (the one fold): a pending approval, the
// in-flight call an approval admits, and which waits a revocation releases.

export function pendingRecord(event: EventOf<'approval.requested'>): PendingApproval {
  const reserved = Object.freeze({ ...event.reserved, ...(event.reserved.meters !== undefined ? { meters: Object.freeze({ ...event.reserved.meters }) } : {}) });
  const record: { -readonly [K in keyof PendingApproval]: PendingApproval[K] } = {
    approvalId: event.approvalId,
    callId: event.callId,
    grantId: event.grantId,
    tool: event.tool,
    argsDigest: event.argsDigest,
    reserved,
    requestedAt: event.at,
    deadline: event.deadline,
    seq: event.seq,
  };
  if (event.ancestors !== undefined) record.ancestors = Object.freeze([...event.ancestors]);
  if (event.idempotency !== undefined) record.key = event.idempotency.keyDigest;
  return Object.freeze(record);
}

/** An approved call enters `inFlight` as an admission made at the approval (its deadline: the call timeout from then). */
export function approvedCall(pending: PendingApproval, event: EventOf<'approval.resolved'>): InFlightCall {
  const call: { -readonly [K in keyof InFlightCall]: InFlightCall[K] } = { callId: pending.callId, grantId: pending.grantId, tool: pending.tool, reserved: pending.reserved, admittedAt: event.at, seq: event.seq };
  if (event.deadline !== undefined) call.deadline = event.deadline;
  if (pending.key !== undefined) call.key = pending.key;
  return Object.freeze(call);
}

/** The waits a revocation of `revokedId` ends: those of that grant and of every grant below it. */
export function waitsBelow(state: LedgerState, revokedId: string): PendingApproval[] {
  if (state.approvals === undefined) return [];
  const found: PendingApproval[] = [];
  for (const pending of shardValues(state.approvals)) {
    if (pending.grantId === revokedId || (pending.ancestors?.includes(revokedId) ?? false)) found.push(pending);
  }
  return found;
}

import type { LedgerEvent, MeterAmounts } from './events';
import { grantRecord, inFlightCall, meterRelease, refunds, revokedGrant, toolRecord, withCallUsage, withDescendant } from './records';
import { bindKey, setKeyStatus } from './idempotencyFold';
import { failedStatus } from './idempotency';
import { emptyShardedMap, shardGet } from './shardedMap';
import { approvedCall, pendingRecord, waitsBelow } from './approvalFold';
import type { ApprovalEnd, PendingApproval } from './state';
import type { MapWrites, WritableState } from './stateWrites';

/**
 * The one definition of how each event changes the state. `s` is a root the caller may write (a
 * fresh copy per event in `evolve`, the batch's own root in `TransientState`); `writes` says how
 * maps and arrays are written (copied or owned, stateWrites.ts). Records (tools, grants, in-flight
 * calls) are new frozen values per change either way (records.ts), so both folds build equal states
 * (test/property/evolveBatch.test.ts). It trusts the event: checking events is `verify`'s job,
 * deciding them is `decide`'s.
 */
export function applyEvent(s: WritableState, writes: MapWrites, event: LedgerEvent): void {
  s.head = Object.freeze({ seq: event.seq, hash: event.hash });
  switch (event.type) {
    case 'tool.registered':
      s.tools = Object.freeze({ ...s.tools, [event.tool]: toolRecord(event) });
      return;
    case 'grant.issued': {
      const record = grantRecord(event, event.parentGrantId === undefined ? undefined : shardGet(s.grants, event.parentGrantId));
      s.grants = writes.put(s.grants, event.grantId, record);
      // A child counts against its root's bound on delegated grants.
      const root = record.ancestors === undefined ? undefined : shardGet(s.grants, record.ancestors[0] as string);
      if (root !== undefined) s.grants = writes.put(s.grants, root.grantId, withDescendant(root));
      s.tokens = writes.put(s.tokens, event.tokenDigest, event.grantId);
      return;
    }
    case 'grant.revoked': {
      const grant = shardGet(s.grants, event.grantId);
      if (grant !== undefined) s.grants = writes.put(s.grants, event.grantId, revokedGrant(grant));
      // Calls of the subtree still waiting for a person are released (their invoke: `revoked`).
      if (grant !== undefined) for (const pending of waitsBelow(s, event.grantId)) endWait(s, writes, pending, 'revoked');
      return;
    }
    case 'call.admitted': {
      charge(s, writes, event.grantId, event.reserved.calls, event.reserved.inputBytes, event.reserved.meters, 1, event.at);
      const call = inFlightCall(event);
      s.inFlight = writes.put(s.inFlight, event.callId, call);
      // A keyed admission binds its key (idempotencyFold.ts); the tree's root keeps the queue.
      if (call.key !== undefined) bindKey(s, writes, event);
      return;
    }
    case 'call.completed': {
      // A metered call releases what it reserved beyond its charge (two-phase: post the real amount).
      const call = shardGet(s.inFlight, event.callId);
      const release = event.charged === undefined ? undefined : meterRelease(call, event.charged);
      s.inFlight = writes.remove(s.inFlight, event.callId);
      if (release !== undefined) charge(s, writes, event.grantId, 0, 0, release, -1, undefined);
      // A keyed call's binding needs no write: leaving `inFlight` makes it completed (idempotency.ts, keyStatus).
      return;
    }
    case 'call.failed': {
      const call = shardGet(s.inFlight, event.callId);
      const release = event.charged === undefined ? undefined : meterRelease(call, event.charged);
      s.inFlight = writes.remove(s.inFlight, event.callId);
      const back = refunds(event);
      if (back || release !== undefined) charge(s, writes, event.grantId, back ? -event.refunded.calls : 0, back ? -event.refunded.inputBytes : 0, release, -1, undefined);
      if (call?.key !== undefined) s.idempotencyBindings = setKeyStatus(s.idempotencyBindings, writes, call.key, call.grantId, event.callId, failedStatus(event));
      return;
    }
    case 'approval.requested': {
      // A call waiting for a person reserves along its chain as an admission does (docs/approvals.md).
      const r = event.reserved;
      charge(s, writes, event.grantId, r.calls, r.inputBytes, r.meters, 1, event.at);
      s.approvals = writes.put(s.approvals ?? emptyShardedMap<PendingApproval>(), event.approvalId, pendingRecord(event));
      // A keyed call binds its key while it waits: a retry replays it rather than asking again.
      if (event.idempotency !== undefined) bindKey(s, writes, event, true);
      return;
    }
    case 'approval.resolved': {
      const pending = s.approvals === undefined ? undefined : shardGet(s.approvals, event.approvalId);
      if (pending === undefined) {
        s.approvalsEnded = writes.put(s.approvalsEnded ?? emptyShardedMap<ApprovalEnd>(), event.approvalId, event.outcome);
        return;
      }
      endWait(s, writes, pending, event.outcome);
      if (event.outcome === 'approved') s.inFlight = writes.put(s.inFlight, pending.callId, approvedCall(pending, event));
      return;
    }
    case 'call.rejected':
    case 'call.replayed':
    case 'fetch.hop':
    case 'attenuation.rejected':
    case 'revocation.rejected':
      // Records of what was decided or refused: only the head moves.
      return;
  }
}

/**
 * Ends a wait: out of `approvals`, its end recorded; anything but an approval gives its reservation
 * back along the chain. A keyed call's binding stops waiting: admitted, or failed (its retry learns
 * the call did not run).
 */
function endWait(s: WritableState, writes: MapWrites, pending: PendingApproval, end: ApprovalEnd): void {
  s.approvals = writes.remove(s.approvals as NonNullable<WritableState['approvals']>, pending.approvalId);
  s.approvalsEnded = writes.put(s.approvalsEnded ?? emptyShardedMap<ApprovalEnd>(), pending.approvalId, end);
  if (end !== 'approved') charge(s, writes, pending.grantId, -pending.reserved.calls, -pending.reserved.inputBytes, pending.reserved.meters, -1, undefined);
  if (pending.key !== undefined) s.idempotencyBindings = setKeyStatus(s.idempotencyBindings, writes, pending.key, pending.grantId, pending.callId, end === 'approved' ? undefined : 'failed');
}

/**
 * Charges (or, with negative amounts and sign −1, gives back) a call's amounts on its grant and on
 * every ancestor the grant record names: one write per grant in the chain, no scan. `admittedAt`
 * (an admission) also enters the rate windows along the chain (records.ts, withCallUsage).
 */
function charge(s: WritableState, writes: MapWrites, grantId: string, calls: number, inputBytes: number, meters: MeterAmounts | undefined, sign: 1 | -1, admittedAt: number | undefined): void {
  const grant = shardGet(s.grants, grantId);
  if (grant === undefined) return;
  s.grants = writes.put(s.grants, grantId, withCallUsage(grant, calls, inputBytes, meters, sign, admittedAt));
  if (grant.ancestors === undefined) return;
  for (const id of grant.ancestors) {
    const ancestor = shardGet(s.grants, id);
    if (ancestor !== undefined) s.grants = writes.put(s.grants, id, withCallUsage(ancestor, calls, inputBytes, meters, sign, admittedAt));
  }
}

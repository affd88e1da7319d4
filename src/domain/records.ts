import { freeze, produce } from 'immer';
import type { EventOf } from './events';
import type { GrantRecord, InFlightCall, ToolRecord } from './state';

// The records events create or change, shared by `evolve` (one event) and `TransientState` (a
// batch), so both folds build the very same values.

export function toolRecord(event: EventOf<'tool.registered'>): ToolRecord {
  return freeze({ name: event.tool, inputSchema: event.inputSchema }, true);
}

/**
 * A new grant's record. A child (its event names a parent) also keeps its parent's id and its
 * ancestors' ids, root first: the parent's list plus the parent, copied once at issue so that a call
 * finds its whole chain without a scan. `parent` is the parent's record in the state folded so far.
 */
export function grantRecord(event: EventOf<'grant.issued'>, parent: GrantRecord | undefined): GrantRecord {
  const base = {
    grantId: event.grantId,
    tokenDigest: event.tokenDigest,
    scope: event.scope,
    revoked: false,
    used: { calls: 0, inputBytes: 0 },
    issuedAt: event.at,
  };
  if (event.parentGrantId === undefined) return freeze(base, true);
  const ancestors = parent === undefined ? [event.parentGrantId] : [...(parent.ancestors ?? []), parent.grantId];
  return freeze({ ...base, parentGrantId: event.parentGrantId, ancestors }, true);
}

export function revokedGrant(grant: GrantRecord): GrantRecord {
  return produce(grant, (draft) => { draft.revoked = true; });
}

// The one record change on every call: done by hand. With immer's `produce` here, a sequential
// no-op call cost 10-50% more (A/B in docs/performance.md, "What each design choice costs").
export function withUsage(grant: GrantRecord, calls: number, inputBytes: number): GrantRecord {
  const used = Object.freeze({ calls: grant.used.calls + calls, inputBytes: grant.used.inputBytes + inputBytes });
  // Fields listed rather than spread: V8 builds a literal of known shape several times faster.
  if (grant.ancestors === undefined) {
    return Object.freeze({ grantId: grant.grantId, tokenDigest: grant.tokenDigest, scope: grant.scope, revoked: grant.revoked, used, issuedAt: grant.issuedAt });
  }
  return Object.freeze({
    grantId: grant.grantId,
    tokenDigest: grant.tokenDigest,
    scope: grant.scope,
    revoked: grant.revoked,
    used,
    issuedAt: grant.issuedAt,
    parentGrantId: grant.parentGrantId,
    ancestors: grant.ancestors,
  });
}

// Made on every admission, so frozen by hand like the usage charge: immer's deep `freeze` walked it
// at ≈ 0.4 µs per call (verify's main thread: 2.45 → 2.08 s per 1,000,000 events). `reserved` is
// the event's own two-number object; freezing it makes the record deep-frozen.
export function inFlightCall(event: EventOf<'call.admitted'>): InFlightCall {
  return Object.freeze({
    callId: event.callId,
    grantId: event.grantId,
    tool: event.tool,
    reserved: Object.freeze(event.reserved),
    admittedAt: event.at,
    seq: event.seq,
  });
}

/** Whether a failed call gives budget back. */
export function refunds(event: EventOf<'call.failed'>): boolean {
  return event.refunded.calls !== 0 || event.refunded.inputBytes !== 0;
}

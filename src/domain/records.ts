import { freeze, produce } from 'immer';
import type { EventOf } from './events';
import type { GrantRecord, InFlightCall, ToolRecord } from './state';

// The records events create or change, shared by `evolve` (one event) and `TransientState` (a
// batch), so both folds build the very same values.

export function toolRecord(event: EventOf<'tool.registered'>): ToolRecord {
  return freeze({ name: event.tool, inputSchema: event.inputSchema }, true);
}

export function grantRecord(event: EventOf<'grant.issued'>): GrantRecord {
  return freeze({
    grantId: event.grantId,
    tokenDigest: event.tokenDigest,
    scope: event.scope,
    revoked: false,
    used: { calls: 0, inputBytes: 0 },
    issuedAt: event.at,
  }, true);
}

export function revokedGrant(grant: GrantRecord): GrantRecord {
  return produce(grant, (draft) => { draft.revoked = true; });
}

// The one record change on every call: done by hand. With immer's `produce` here, a sequential
// no-op call cost 10-50% more (A/B in docs/performance.md, "What each design choice costs").
export function withUsage(grant: GrantRecord, calls: number, inputBytes: number): GrantRecord {
  const used = Object.freeze({ calls: grant.used.calls + calls, inputBytes: grant.used.inputBytes + inputBytes });
  // Fields listed rather than spread: V8 builds a literal of known shape several times faster.
  return Object.freeze({ grantId: grant.grantId, tokenDigest: grant.tokenDigest, scope: grant.scope, revoked: grant.revoked, used, issuedAt: grant.issuedAt });
}

export function inFlightCall(event: EventOf<'call.admitted'>): InFlightCall {
  return freeze({
    callId: event.callId,
    grantId: event.grantId,
    tool: event.tool,
    reserved: event.reserved,
    admittedAt: event.at,
    seq: event.seq,
  }, true);
}

/** Whether a failed call gives budget back. */
export function refunds(event: EventOf<'call.failed'>): boolean {
  return event.refunded.calls !== 0 || event.refunded.inputBytes !== 0;
}

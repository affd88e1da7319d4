import { freeze, produce } from 'immer';
import type { EventOf, MeterAmounts } from './events';
import { metersAfter } from './meters';
import { noAdmissionTimes, withAdmissionTime } from './rateWindow';
import type { AdmissionTimes, GrantRecord, InFlightCall, KeyQueue, ToolRecord } from './state';

// The records events create or change, shared by `evolve` (one event) and `TransientState` (a
// batch), so both folds build the very same values.

export function toolRecord(event: EventOf<'tool.registered'>): ToolRecord {
  return freeze({ name: event.tool, inputSchema: event.inputSchema }, true);
}

/**
 * A new grant's record. A child (its event names a parent) also keeps its parent's id and its
 * ancestors' ids, root first: the parent's list plus the parent, copied once at issue so that a call
 * finds its whole chain without a scan. `parent` is the parent's record in the state folded so far.
 * Built by the same literal as `withUsage`, so that every record of one kind has one hidden class
 * (the chain checks read several records per call); the scope is deep-frozen by immer.
 */
export function grantRecord(event: EventOf<'grant.issued'>, parent: GrantRecord | undefined): GrantRecord {
  const scope = freeze(event.scope, true);
  const used = Object.freeze({ calls: 0, inputBytes: 0 });
  const metersUsed = scope.budget.meters === undefined ? undefined : zeroMeters(scope.budget.meters);
  const admissions = scope.budget.rate === undefined ? undefined : noAdmissionTimes;
  if (event.parentGrantId === undefined) return record(event.grantId, event.tokenDigest, scope, false, used, event.at, undefined, undefined, undefined, metersUsed, admissions, undefined);
  const ancestors = Object.freeze(parent === undefined ? [event.parentGrantId] : [...(parent.ancestors ?? []), parent.grantId]);
  return record(event.grantId, event.tokenDigest, scope, false, used, event.at, event.parentGrantId, ancestors, undefined, metersUsed, admissions, undefined);
}

function zeroMeters(limits: MeterAmounts): MeterAmounts {
  const zeros: Record<string, number> = {};
  for (const name of Object.keys(limits)) zeros[name] = 0;
  return Object.freeze(zeros);
}

/** A root record counting one more grant issued anywhere below it (bounded: limits.delegatedGrantsPerRootMax). */
export function withDescendant(root: GrantRecord): GrantRecord {
  return record(root.grantId, root.tokenDigest, root.scope, root.revoked, root.used, root.issuedAt, root.parentGrantId, root.ancestors, (root.descendants ?? 0) + 1, root.metersUsed, root.admissions, root.keyQueue);
}

// Fields listed rather than spread: V8 builds a literal of known shape several times faster, and
// records of one kind (a child; a root; a root with descendants) then share one shape. A grant with
// meters or a rate window (rare, and slower anyway) takes one literal with every field.
function record(
  grantId: string,
  tokenDigest: string,
  scope: GrantRecord['scope'],
  revoked: boolean,
  used: GrantRecord['used'],
  issuedAt: number,
  parentGrantId: string | undefined,
  ancestors: readonly string[] | undefined,
  descendants: number | undefined,
  metersUsed: MeterAmounts | undefined,
  admissions: AdmissionTimes | undefined,
  keyQueue: KeyQueue | undefined,
): GrantRecord {
  if (metersUsed !== undefined || admissions !== undefined || keyQueue !== undefined) {
    // Absent fields stay absent (no `undefined` values): a snapshot's JSON and `replay` then agree.
    const r: { -readonly [K in keyof GrantRecord]: GrantRecord[K] } = { grantId, tokenDigest, scope, revoked, used, issuedAt };
    if (parentGrantId !== undefined) r.parentGrantId = parentGrantId;
    if (ancestors !== undefined) r.ancestors = ancestors;
    if (descendants !== undefined) r.descendants = descendants;
    if (metersUsed !== undefined) r.metersUsed = metersUsed;
    if (admissions !== undefined) r.admissions = admissions;
    if (keyQueue !== undefined) r.keyQueue = keyQueue;
    return Object.freeze(r);
  }
  if (ancestors === undefined) {
    if (descendants === undefined) return Object.freeze({ grantId, tokenDigest, scope, revoked, used, issuedAt });
    return Object.freeze({ grantId, tokenDigest, scope, revoked, used, issuedAt, descendants });
  }
  return Object.freeze({ grantId, tokenDigest, scope, revoked, used, issuedAt, parentGrantId, ancestors });
}

/** A root record keeping its tree's key queue (idempotency.ts): every admission in the tree rewrites the record anyway. */
export function withKeyQueue(root: GrantRecord, queue: KeyQueue): GrantRecord {
  return record(root.grantId, root.tokenDigest, root.scope, root.revoked, root.used, root.issuedAt, root.parentGrantId, root.ancestors, root.descendants, root.metersUsed, root.admissions, queue);
}

export function revokedGrant(grant: GrantRecord): GrantRecord {
  return produce(grant, (draft) => { draft.revoked = true; });
}

// The one record change on every call (and on every ancestor of a child's call): done by hand.
// With immer's `produce` here, a sequential no-op call cost 10-50% more (A/B in docs/performance.md,
// "What each design choice costs").
export function withUsage(grant: GrantRecord, calls: number, inputBytes: number): GrantRecord {
  const used = Object.freeze({ calls: grant.used.calls + calls, inputBytes: grant.used.inputBytes + inputBytes });
  return record(grant.grantId, grant.tokenDigest, grant.scope, grant.revoked, used, grant.issuedAt, grant.parentGrantId, grant.ancestors, grant.descendants, grant.metersUsed, grant.admissions, grant.keyQueue);
}

/**
 * The usage change of a call on one grant of its chain, for every kind of grant: calls and input
 * bytes as `withUsage`; `meters` reserved (sign 1) or released (sign −1) on the meters this grant
 * caps; `admittedAt` (an admission) added to its rate window's times. A grant with neither meters
 * nor a rate takes `withUsage` unchanged.
 */
export function withCallUsage(grant: GrantRecord, calls: number, inputBytes: number, meters: MeterAmounts | undefined, sign: 1 | -1, admittedAt: number | undefined): GrantRecord {
  if (grant.metersUsed === undefined && grant.admissions === undefined) return withUsage(grant, calls, inputBytes);
  const used = calls === 0 && inputBytes === 0 ? grant.used : Object.freeze({ calls: grant.used.calls + calls, inputBytes: grant.used.inputBytes + inputBytes });
  const metersUsed = grant.metersUsed === undefined || meters === undefined ? grant.metersUsed : metersAfter(grant.metersUsed, meters, sign);
  const rate = grant.scope.budget.rate;
  const admissions = grant.admissions === undefined || rate === undefined || admittedAt === undefined ? grant.admissions : withAdmissionTime(grant.admissions, rate.calls, admittedAt);
  return record(grant.grantId, grant.tokenDigest, grant.scope, grant.revoked, used, grant.issuedAt, grant.parentGrantId, grant.ancestors, grant.descendants, metersUsed, admissions, grant.keyQueue);
}

// Made on every admission, so frozen by hand like the usage charge: immer's deep `freeze` walked it
// at ≈ 0.4 µs per call (verify's main thread: 2.45 → 2.08 s per 1,000,000 events). `reserved` is
// the event's own two-number object; freezing it makes the record deep-frozen.
export function inFlightCall(event: EventOf<'call.admitted'>): InFlightCall {
  // A metered reservation's meter map is the event's own too (already frozen when sealed here).
  if (event.reserved.meters !== undefined) Object.freeze(event.reserved.meters);
  if (event.deadline !== undefined || event.idempotency !== undefined) {
    // The rarer shapes (a deadline, an idempotency binding): built field by field.
    const call: { -readonly [K in keyof InFlightCall]: InFlightCall[K] } = { callId: event.callId, grantId: event.grantId, tool: event.tool, reserved: Object.freeze(event.reserved), admittedAt: event.at, seq: event.seq };
    if (event.deadline !== undefined) call.deadline = event.deadline;
    if (event.idempotency !== undefined) call.key = event.idempotency.keyDigest;
    return Object.freeze(call);
  }
  return Object.freeze({
    callId: event.callId,
    grantId: event.grantId,
    tool: event.tool,
    reserved: Object.freeze(event.reserved),
    admittedAt: event.at,
    seq: event.seq,
  });
}

/**
 * What a settlement gives back on the meters a call reserved: `reserved − charged` per meter, or
 * undefined when the call reserved none (or nothing is released).
 */
export function meterRelease(call: InFlightCall | undefined, charged: MeterAmounts | undefined): MeterAmounts | undefined {
  const reserved = call?.reserved.meters;
  if (reserved === undefined || charged === undefined) return undefined;
  let release: Record<string, number> | undefined;
  for (const name of Object.keys(reserved)) {
    const back = (reserved[name] as number) - (Object.prototype.hasOwnProperty.call(charged, name) ? (charged[name] as number) : 0);
    if (back === 0) continue;
    release ??= {};
    release[name] = back;
  }
  return release;
}

/** Whether a failed call gives budget back. */
export function refunds(event: EventOf<'call.failed'>): boolean {
  return event.refunded.calls !== 0 || event.refunded.inputBytes !== 0;
}

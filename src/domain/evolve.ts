import type { LedgerEvent } from './events';
import type { MeterAmounts } from './events';
import { grantRecord, inFlightCall, meterRelease, refunds, revokedGrant, toolRecord, withCallUsage, withDescendant } from './records';
import { bindKey, failKey, type KeyMaps, type MapWrites } from './idempotencyFold';
import { failedStatus } from './idempotency';
import { shardGet, shardWith, shardWithout } from './shardedMap';
import type { LedgerState } from './state';

/**
 * Charges (or, with negative amounts and sign −1, gives back) a call's amounts on its grant and on
 * every ancestor the grant record names: one path copy per grant in the chain, no scan. `admittedAt`
 * (an admission) also enters the rate windows along the chain (records.ts, withCallUsage).
 */
function charged(grants: LedgerState['grants'], grantId: string, calls: number, inputBytes: number, meters: MeterAmounts | undefined, sign: 1 | -1, admittedAt: number | undefined): LedgerState['grants'] {
  const grant = shardGet(grants, grantId);
  if (grant === undefined) return grants;
  let next = shardWith(grants, grantId, withCallUsage(grant, calls, inputBytes, meters, sign, admittedAt));
  if (grant.ancestors !== undefined) {
    for (const id of grant.ancestors) {
      const ancestor = shardGet(next, id);
      if (ancestor !== undefined) next = shardWith(next, id, withCallUsage(ancestor, calls, inputBytes, meters, sign, admittedAt));
    }
  }
  return next;
}

const pathCopies: MapWrites = {
  put: shardWith,
  remove: shardWithout,
  writable: (array) => [...array],
  fresh: () => [],
  done: (array) => Object.freeze(array),
};


/**
 * Folds one event into the state. Pure; returns a new frozen state sharing every untouched node.
 *
 * Records are made by immer (`freeze` deep for new tools and grants, `produce` for a revocation;
 * see records.ts); the containers every event touches (the root and the sharded maps,
 * see shardedMap.ts), the per-call usage counters and in-flight records are made by hand, along one path,
 * because `produce` costs about 2.5 µs against 0.2 µs for a hand copy and those change on every event.
 * A batch of events folds cheaper with `evolveBatch` (same result). It trusts the event: checking
 * events is `verify`'s job, deciding them is `decide`'s.
 */
export function evolve(state: LedgerState, event: LedgerEvent): LedgerState {
  const head = Object.freeze({ seq: event.seq, hash: event.hash });
  switch (event.type) {
    case 'tool.registered':
      return Object.freeze({ ...state, head, tools: Object.freeze({ ...state.tools, [event.tool]: toolRecord(event) }) });
    case 'grant.issued': {
      const parent = event.parentGrantId === undefined ? undefined : shardGet(state.grants, event.parentGrantId);
      const record = grantRecord(event, parent);
      let grants = shardWith(state.grants, event.grantId, record);
      // A child counts against its root's bound on delegated grants.
      const root = record.ancestors === undefined ? undefined : shardGet(grants, record.ancestors[0] as string);
      if (root !== undefined) grants = shardWith(grants, root.grantId, withDescendant(root));
      return Object.freeze({ ...state, head, grants, tokens: shardWith(state.tokens, event.tokenDigest, event.grantId) });
    }
    case 'grant.revoked': {
      const grant = shardGet(state.grants, event.grantId);
      if (grant === undefined) return Object.freeze({ ...state, head });
      return Object.freeze({ ...state, head, grants: shardWith(state.grants, event.grantId, revokedGrant(grant)) });
    }
    case 'call.admitted': {
      const grants = charged(state.grants, event.grantId, event.reserved.calls, event.reserved.inputBytes, event.reserved.meters, 1, event.at);
      const call = inFlightCall(event);
      const inFlight = shardWith(state.inFlight, event.callId, call);
      if (call.key === undefined) return Object.freeze({ ...state, head, grants, inFlight });
      // A keyed admission binds its key on copies (idempotencyFold.ts); the root keeps the queue.
      const maps: KeyMaps = { grants, idempotencyBindings: state.idempotencyBindings };
      bindKey(maps, pathCopies, event);
      return Object.freeze({ ...state, head, grants: maps.grants, inFlight, idempotencyBindings: maps.idempotencyBindings });
    }
    case 'call.rejected':
    case 'call.replayed':
    case 'fetch.hop':
      return Object.freeze({ ...state, head });
    case 'call.completed': {
      const call = shardGet(state.inFlight, event.callId);
      const inFlight = shardWithout(state.inFlight, event.callId);
      // A metered call releases what it reserved beyond its charge (two-phase: post the real amount).
      const release = event.charged === undefined ? undefined : meterRelease(call, event.charged);
      const grants = release === undefined ? state.grants : charged(state.grants, event.grantId, 0, 0, release, -1, undefined);
      // A keyed call's binding needs nothing: leaving `inFlight` makes it completed (idempotency.ts, keyStatus).
      return Object.freeze({ ...state, head, grants, inFlight });
    }
    case 'call.failed': {
      const call = shardGet(state.inFlight, event.callId);
      const inFlight = shardWithout(state.inFlight, event.callId);
      const release = event.charged === undefined ? undefined : meterRelease(call, event.charged);
      const back = refunds(event);
      const grants = !back && release === undefined ? state.grants : charged(state.grants, event.grantId, back ? -event.refunded.calls : 0, back ? -event.refunded.inputBytes : 0, release, -1, undefined);
      if (call?.key === undefined) return Object.freeze({ ...state, head, grants, inFlight });
      return Object.freeze({ ...state, head, grants, inFlight, idempotencyBindings: failKey(state.idempotencyBindings, pathCopies, call.key, call.grantId, event.callId, failedStatus(event)) });
    }
    case 'attenuation.rejected':
    case 'revocation.rejected':
      return Object.freeze({ ...state, head });
  }
}

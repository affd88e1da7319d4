import { freeze, produce } from 'immer';
import type { LedgerEvent } from './events';
import { shardGet, shardWith, shardWithout } from './shardedMap';
import type { GrantRecord, InFlightCall, LedgerState } from './state';

// The one record change on every call: done by hand. With immer's `produce` here, a sequential
// no-op call cost 15-50% more (A/B in docs/performance.md, "State and immer").
function withUsage(grant: GrantRecord, calls: number, inputBytes: number): GrantRecord {
  const used = Object.freeze({ calls: grant.used.calls + calls, inputBytes: grant.used.inputBytes + inputBytes });
  return Object.freeze({ ...grant, used });
}

/**
 * Folds one event into the state. Pure; returns a new frozen state sharing every untouched node.
 *
 * Records are made by immer (`freeze` deep for new tools, grants and in-flight calls, `produce` for
 * a revocation); the containers every event touches (the root and the sharded maps, see
 * shardedMap.ts) and the per-call usage counters are copied on write by hand, along one path, because
 * `produce` costs about 2.5 µs against 0.2 µs for a hand copy and those change on every event.
 * It trusts the event: checking events is `verify`'s job, deciding them is `decide`'s.
 */
export function evolve(state: LedgerState, event: LedgerEvent): LedgerState {
  const head = Object.freeze({ seq: event.seq, hash: event.hash });
  switch (event.type) {
    case 'tool.registered': {
      const tool = freeze({ name: event.tool, inputSchema: event.inputSchema }, true);
      return Object.freeze({ ...state, head, tools: Object.freeze({ ...state.tools, [event.tool]: tool }) });
    }
    case 'grant.issued': {
      const grant: GrantRecord = freeze({
        grantId: event.grantId,
        tokenDigest: event.tokenDigest,
        scope: event.scope,
        revoked: false,
        used: { calls: 0, inputBytes: 0 },
        issuedAt: event.at,
      }, true);
      return Object.freeze({
        ...state,
        head,
        grants: shardWith(state.grants, event.grantId, grant),
        tokens: shardWith(state.tokens, event.tokenDigest, event.grantId),
      });
    }
    case 'grant.revoked': {
      const grant = shardGet(state.grants, event.grantId);
      if (grant === undefined) return Object.freeze({ ...state, head });
      return Object.freeze({ ...state, head, grants: shardWith(state.grants, event.grantId, produce(grant, (draft) => { draft.revoked = true; })) });
    }
    case 'call.admitted': {
      const grant = shardGet(state.grants, event.grantId);
      const grants = grant === undefined ? state.grants : shardWith(state.grants, event.grantId, withUsage(grant, event.reserved.calls, event.reserved.inputBytes));
      const call: InFlightCall = freeze({
        callId: event.callId,
        grantId: event.grantId,
        tool: event.tool,
        reserved: event.reserved,
        admittedAt: event.at,
        seq: event.seq,
      }, true);
      return Object.freeze({ ...state, head, grants, inFlight: shardWith(state.inFlight, event.callId, call) });
    }
    case 'call.rejected':
      return Object.freeze({ ...state, head });
    case 'call.completed':
      return Object.freeze({ ...state, head, inFlight: shardWithout(state.inFlight, event.callId) });
    case 'call.failed': {
      const inFlight = shardWithout(state.inFlight, event.callId);
      const grant = shardGet(state.grants, event.grantId);
      const refunds = grant !== undefined && (event.refunded.calls !== 0 || event.refunded.inputBytes !== 0);
      const grants = refunds ? shardWith(state.grants, event.grantId, withUsage(grant, -event.refunded.calls, -event.refunded.inputBytes)) : state.grants;
      return Object.freeze({ ...state, head, grants, inFlight });
    }
  }
}

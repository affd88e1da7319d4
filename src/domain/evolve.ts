import type { LedgerEvent } from './events';
import { deepFreeze } from './freeze';
import { shardGet, shardWith, shardWithout } from './shardedMap';
import type { GrantRecord, LedgerState } from './state';

function withUsage(grant: GrantRecord, calls: number, inputBytes: number): GrantRecord {
  const used = Object.freeze({ calls: grant.used.calls + calls, inputBytes: grant.used.inputBytes + inputBytes });
  return Object.freeze({ ...grant, used });
}

/**
 * Folds one event into the state. Pure; returns a new frozen state sharing every untouched node
 * (copy-on-write along one path of each sharded map: the guarantees of immer's `produce` (frozen,
 * structurally shared plain data) at a fraction of its cost per event).
 * It trusts the event: checking events is `verify`'s job, deciding them is `decide`'s.
 */
export function evolve(state: LedgerState, event: LedgerEvent): LedgerState {
  const head = Object.freeze({ seq: event.seq, hash: event.hash });
  switch (event.type) {
    case 'tool.registered': {
      const tool = deepFreeze({ name: event.tool, inputSchema: event.inputSchema });
      return Object.freeze({ ...state, head, tools: Object.freeze({ ...state.tools, [event.tool]: tool }) });
    }
    case 'grant.issued': {
      const grant: GrantRecord = deepFreeze({
        grantId: event.grantId,
        tokenDigest: event.tokenDigest,
        scope: event.scope,
        revoked: false,
        used: { calls: 0, inputBytes: 0 },
        issuedAt: event.at,
      });
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
      return Object.freeze({ ...state, head, grants: shardWith(state.grants, event.grantId, Object.freeze({ ...grant, revoked: true })) });
    }
    case 'call.admitted': {
      const grant = shardGet(state.grants, event.grantId);
      const grants = grant === undefined ? state.grants : shardWith(state.grants, event.grantId, withUsage(grant, event.reserved.calls, event.reserved.inputBytes));
      const call = Object.freeze({
        callId: event.callId,
        grantId: event.grantId,
        tool: event.tool,
        reserved: deepFreeze(event.reserved),
        admittedAt: event.at,
        seq: event.seq,
      });
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

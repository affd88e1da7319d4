import { castDraft, produce } from 'immer';
import type { LedgerEvent } from './events';
import { shardDelete, shardGet, shardSet } from './shardedMap';
import type { GrantRecord, LedgerState } from './state';

function withUsage(grant: GrantRecord, calls: number, inputBytes: number): GrantRecord {
  return { ...grant, used: { calls: grant.used.calls + calls, inputBytes: grant.used.inputBytes + inputBytes } };
}

/**
 * Folds one event into the state. Pure; returns a new frozen state sharing every untouched node.
 * It trusts the event: checking events is `verify`'s job, deciding them is `decide`'s.
 */
export function evolve(state: LedgerState, event: LedgerEvent): LedgerState {
  return produce(state, (draft) => {
    draft.head = { seq: event.seq, hash: event.hash };
    switch (event.type) {
      case 'tool.registered':
        draft.tools[event.tool] = castDraft({ name: event.tool, inputSchema: event.inputSchema });
        return;
      case 'grant.issued':
        shardSet(draft.grants, event.grantId, {
          grantId: event.grantId,
          tokenDigest: event.tokenDigest,
          scope: event.scope,
          revoked: false,
          used: { calls: 0, inputBytes: 0 },
          issuedAt: event.at,
        });
        shardSet(draft.tokens, event.tokenDigest, event.grantId);
        return;
      case 'grant.revoked': {
        const grant = shardGet(state.grants, event.grantId);
        if (grant !== undefined) shardSet(draft.grants, event.grantId, { ...grant, revoked: true });
        return;
      }
      case 'call.admitted': {
        const grant = shardGet(state.grants, event.grantId);
        if (grant !== undefined) shardSet(draft.grants, event.grantId, withUsage(grant, event.reserved.calls, event.reserved.inputBytes));
        shardSet(draft.inFlight, event.callId, {
          callId: event.callId,
          grantId: event.grantId,
          tool: event.tool,
          reserved: event.reserved,
          admittedAt: event.at,
          seq: event.seq,
        });
        return;
      }
      case 'call.rejected':
        return;
      case 'call.completed':
        shardDelete(draft.inFlight, event.callId);
        return;
      case 'call.failed': {
        shardDelete(draft.inFlight, event.callId);
        const grant = shardGet(state.grants, event.grantId);
        if (grant !== undefined && (event.refunded.calls !== 0 || event.refunded.inputBytes !== 0)) {
          shardSet(draft.grants, event.grantId, withUsage(grant, -event.refunded.calls, -event.refunded.inputBytes));
        }
        return;
      }
    }
  });
}

import { eventHash } from '../domain/chain';
import { evolve } from '../domain/evolve';
import { initialState, type LedgerState } from '../domain/state';
import { LedgerError } from '../errors';
import type { EventStore } from '../stores/eventStore';

/** Rebuilds the state from a store's log, refusing one whose sequence or hash chain does not verify. */
export function openLog(store: EventStore): LedgerState {
  let state = initialState;
  for (const event of store.load()) {
    if (event.seq !== state.head.seq + 1) throw new LedgerError('invalid_log', `stored log is out of sequence at seq ${event.seq} (expected ${state.head.seq + 1})`);
    if (event.prevHash !== state.head.hash || eventHash(event) !== event.hash) throw new LedgerError('invalid_log', `stored log's hash chain breaks at seq ${event.seq}`);
    state = evolve(state, event);
  }
  return state;
}

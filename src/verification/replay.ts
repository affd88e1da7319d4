import type { LedgerEvent } from '../domain/events';
import { evolve } from '../domain/evolve';
import { initialState, type LedgerState } from '../domain/state';

/** Folds a log into the state a live ledger holds after appending it: a fold of `evolve`. */
export function replay(events: Iterable<LedgerEvent>, from: LedgerState = initialState): LedgerState {
  let state = from;
  for (const event of events) state = evolve(state, event);
  return state;
}

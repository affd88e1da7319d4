import type { LedgerEvent } from '../domain/events';
import { evolveBatch } from '../domain/evolveBatch';
import { initialState, type LedgerState } from '../domain/state';

/**
 * Folds a log into the state a live ledger holds after appending it: a fold of `evolve`, computed
 * with `evolveBatch` (the same frozen result, each trie path copied once).
 */
export function replay(events: Iterable<LedgerEvent>, from: LedgerState = initialState): LedgerState {
  return evolveBatch(from, events);
}

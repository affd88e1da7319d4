import { eventHash } from '../domain/chain';
import type { LedgerEvent } from '../domain/events';
import { evolve } from '../domain/evolve';
import type { LedgerState } from '../domain/state';
import { LedgerError } from '../errors';

/** Folds events other writers appended to a shared log, refusing any that do not chain on `state`. */
export function foldForeign(start: LedgerState, foreign: readonly LedgerEvent[]): LedgerState {
  let state = start;
  for (const event of foreign) {
    if (event.seq !== state.head.seq + 1 || event.prevHash !== state.head.hash || eventHash(event) !== event.hash) {
      throw new LedgerError('invalid_log', `the shared log does not chain at seq ${event.seq}`);
    }
    state = evolve(state, event);
  }
  return state;
}


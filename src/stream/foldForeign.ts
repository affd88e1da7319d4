import { eventHash } from '../domain/chain';
import type { LedgerEvent } from '../domain/events';
import type { LedgerState } from '../domain/state';
import { TransientState } from '../domain/transientState';
import { LedgerError } from '../errors';
import { isHashChecked } from './hashChecked';

/** Folds events other writers appended to a shared log, refusing any that do not chain on `state`. */
export function foldForeign(start: LedgerState, foreign: readonly LedgerEvent[]): LedgerState {
  if (foreign.length === 0) return start;
  // A batch fold, like the ledger's own batches: several writers' events copy each trie path once.
  // Every event's seq and chain are checked here; its hash too, unless the store checked it already.
  const fold = new TransientState(start);
  for (const event of foreign) {
    const head = fold.view.head;
    if (event.seq !== head.seq + 1 || event.prevHash !== head.hash || (!isHashChecked(event) && eventHash(event) !== event.hash)) {
      throw new LedgerError('invalid_log', `the shared log does not chain at seq ${event.seq}`);
    }
    fold.apply(event);
  }
  return fold.commit();
}


import type { LedgerEvent } from './events';
import type { LedgerState } from './state';
import { TransientState } from './transientState';

// Nodes a transient edit created stay referenced until it commits (even ones it pruned again), so a
// long fold commits every so many events.
const commitEvery = 4_096;

/**
 * Folds events into the state: the same frozen, structurally shared result as folding `evolve` one
 * event at a time, built with batch-local transient nodes (transientState.ts). Pure: `state` is
 * neither changed nor retained.
 */
export function evolveBatch(state: LedgerState, events: Iterable<LedgerEvent>): LedgerState {
  const transient = new TransientState(state);
  let sinceCommit = 0;
  for (const event of events) {
    transient.apply(event);
    if (++sinceCommit === commitEvery) {
      transient.commit();
      sinceCommit = 0;
    }
  }
  return transient.commit();
}

import type { LedgerEvent } from './events';
import type { LedgerState } from './state';
import { TransientState } from './transientState';

/**
 * Folds events into the state: the same frozen, structurally shared result as folding `evolve` one
 * event at a time, built with batch-local transient nodes (transientState.ts). Pure: `state` is
 * neither changed nor retained.
 */
export function evolveBatch(state: LedgerState, events: Iterable<LedgerEvent>): LedgerState {
  const transient = new TransientState(state);
  for (const event of events) transient.apply(event);
  return transient.commit();
}

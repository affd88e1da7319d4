import type { LedgerEvent } from '../domain/events';

/**
 * Frozen events whose `hash` was checked against their content already (a PostgreSQL store does it
 * for other writers' events before it takes the log's lock), so that `foldForeign` need not hash them
 * again under the lock. Only the stores mark events (this module is internal); an event is marked
 * only once deeply frozen, so what was checked cannot change afterwards.
 */
const checked = new WeakSet<LedgerEvent>();

export function markHashChecked(event: LedgerEvent): void {
  if (Object.isFrozen(event)) checked.add(event);
}

export function isHashChecked(event: LedgerEvent): boolean {
  return checked.has(event);
}

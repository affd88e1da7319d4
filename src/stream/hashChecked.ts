import type { LedgerEvent } from '../domain/events';

/**
 * Frozen events whose `hash` was checked against their content already (a PostgreSQL store does it
 * for other writers' events before it takes the log's lock), so that `foldForeign` need not hash them
 * again under the lock. Only the stores mark events (this module is internal), and only events
 * `eventOfBody` parsed, which deep-freezes them, so what was checked cannot change afterwards; the
 * check here is the top-level freeze only (a deep walk per event would cost what it saves).
 */
const checked = new WeakSet<LedgerEvent>();

export function markHashChecked(event: LedgerEvent): void {
  if (Object.isFrozen(event)) checked.add(event);
}

export function isHashChecked(event: LedgerEvent): boolean {
  return checked.has(event);
}

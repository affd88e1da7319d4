import type { LedgerEvent } from '../domain/events';
import type { EventStore } from '../stream/ports/eventStore';

/** The default store: an array in this process. Optionally seeded with an existing log. */
export function memoryStore(initial: Iterable<LedgerEvent> = []): EventStore & { readonly size: number } {
  const log: LedgerEvent[] = Array.from(initial);
  return {
    load: () => log,
    append(events) {
      for (const event of events) log.push(event);
    },
    get size() {
      return log.length;
    },
  };
}

import type { LedgerEvent } from '../domain/events';
import type { LedgerState } from '../domain/state';

/**
 * Where the log lives. `load` gives the log to rebuild from; `append` persists one batch of events
 * atomically or throws (a throwing append makes every decision in the batch `ledger_unavailable`).
 */
export interface EventStore {
  load(): Iterable<LedgerEvent>;
  append(events: readonly LedgerEvent[]): void;
  close?(): void;
}

/**
 * A store that several ledgers (threads, processes) share. The ledger decides and appends each batch
 * inside `exclusive`, after folding the events other writers appended since it last looked, so
 * admission stays atomic across all of them.
 */
export interface SharedEventStore extends EventStore {
  /**
   * Runs `fn` inside one exclusive write transaction. `fn` receives the events appended after
   * `afterSeq` by other writers, in order; `append` calls made inside `fn` commit with the
   * transaction; if `fn` throws, everything rolls back and the error propagates.
   */
  exclusive<T>(afterSeq: number, fn: (foreign: readonly LedgerEvent[]) => T): T;
  /** Events after `afterSeq`, read outside any write transaction. */
  readAfter(afterSeq: number): readonly LedgerEvent[];
}

export function isSharedEventStore(store: EventStore): store is SharedEventStore {
  const s = store as Partial<SharedEventStore>;
  return typeof s.exclusive === 'function' && typeof s.readAfter === 'function';
}

/**
 * A store that keeps snapshots of the folded state, so opening a long log need not replay all of it.
 * The ledger opens from `latestSnapshot()` plus `loadAfter(its seq)`, checking sequence and chain of
 * that tail, and offers its state after open and after each committed batch.
 */
export interface SnapshotEventStore extends EventStore {
  /** The newest snapshot the store trusts (docs/storage.md says which), or undefined to replay all. */
  latestSnapshot(): LedgerState | undefined;
  /** The events after `afterSeq`, in order, streamed. */
  loadAfter(afterSeq: number): Iterable<LedgerEvent>;
  /** The state at the log's head; the store may persist it. Must never throw. */
  offerSnapshot(state: LedgerState): void;
}

export function isSnapshotEventStore(store: EventStore): store is SnapshotEventStore {
  const s = store as Partial<SnapshotEventStore>;
  return typeof s.latestSnapshot === 'function' && typeof s.loadAfter === 'function' && typeof s.offerSnapshot === 'function';
}

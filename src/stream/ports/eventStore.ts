import type { LedgerEvent } from '../../domain/events';
import type { LedgerState } from '../../domain/state';

/**
 * Where the log lives. `load` gives the log to rebuild from; `append` persists one batch of events
 * atomically or throws (a throwing append makes every decision in the batch `ledger_unavailable`).
 */
export interface EventStore {
  load(): Iterable<LedgerEvent>;
  append(events: readonly LedgerEvent[]): void;
  close?(): void;
  /**
   * True to have batches gathered (group commit), for a store whose append flushes to disk: the
   * command stream then lets one turn of the event loop pass before a batch, so the requests that
   * arrived together (several HTTP sessions, tool results) share one commit.
   */
  readonly gathersBatches?: boolean;
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
  /**
   * The state at the log's head; the store may persist it. Must never throw. `followerText`, when
   * given, is called only if a snapshot is written: its text is kept beside that snapshot.
   */
  offerSnapshot(state: LedgerState, followerText?: () => string): void;
  /** What `followerText` gave for the snapshot at `seq`, if the store keeps it. */
  snapshotFollowerText?(seq: number): string | undefined;
}

/** Stores that can stream their events' hashes without parsing the events (opening a Merkle tree). */
export interface EventHashSource {
  eventHashes(afterSeq: number, throughSeq: number): Iterable<string>;
}

export function isEventHashSource(store: object): store is EventHashSource {
  return typeof (store as Partial<EventHashSource>).eventHashes === 'function';
}

export function isSnapshotEventStore(store: EventStore): store is SnapshotEventStore {
  const s = store as Partial<SnapshotEventStore>;
  return typeof s.latestSnapshot === 'function' && typeof s.loadAfter === 'function' && typeof s.offerSnapshot === 'function';
}

/**
 * A store reached over the network (PostgreSQL): every operation is asynchronous, so a ledger on it
 * is opened with `openLedger`. The ledger decides each batch inside `exclusive`, as with a
 * SharedEventStore; snapshots are offered as with a SnapshotEventStore.
 */
export interface AsyncEventStore {
  readonly kind: 'async';
  /** The longest a command waits for the store (queue wait included) before failing closed. */
  readonly timeoutMs: number;
  /** How often an open ledger folds other writers' events when it has nothing else to do. */
  readonly catchUpIntervalMs: number;
  /** Connects and migrates; may be called again after it rejected. Rejects with LedgerError. */
  open(): Promise<void>;
  /** The newest trusted snapshot, or undefined to replay all. */
  latestSnapshot(): Promise<LedgerState | undefined>;
  /**
   * Every event after `afterSeq`, in order. With `afterHash` (the ledger's head hash), a store may
   * refuse (reject) when its event at `afterSeq` has another hash: the log lost what the ledger folded.
   */
  readAfter(afterSeq: number, afterHash?: string): Promise<readonly LedgerEvent[]>;
  /**
   * Runs one write transaction: takes the log's lock, reads the events after `afterSeq` (appended by
   * other writers), calls `decide` with them, appends what it returns and commits. It may first call
   * `decide([])` before taking the lock and append the result only if no other writer appended after
   * `afterSeq` (then calling `decide` again with what they appended); on a transient failure it may
   * call `decide` again with a fresh read; it never calls it once a commit is known.
   * Rejects with LedgerError('ledger_unavailable') once `deadline` (a `performance.now()` reading)
   * passes or its retries are spent; nothing `decide` returned is then in the log. `afterHash` is the
   * ledger's head hash, checked as in `readAfter`.
   */
  exclusive(afterSeq: number, decide: (foreign: readonly LedgerEvent[]) => readonly LedgerEvent[], deadline: number, afterHash?: string): Promise<void>;
  /** The state at the log's head; the store may persist it. Must never throw or reject. */
  offerSnapshot(state: LedgerState): void;
  close(): Promise<void>;
}

export function isAsyncEventStore(store: EventStore | AsyncEventStore): store is AsyncEventStore {
  return (store as Partial<AsyncEventStore>).kind === 'async';
}

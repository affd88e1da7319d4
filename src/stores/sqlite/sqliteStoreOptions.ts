import type { EventHashSource, SharedEventStore, SnapshotEventStore } from '../../stream/ports/eventStore';
import type { JournaledStore } from '../../stream/ports/settlementJournal';

// The SQLite store's public types, apart from its implementation: the package's root typings reach
// these without reaching better-sqlite3's (a devDependency's types a consumer does not have).

/** Durability of each commit; weaker settings are refused. */
export type SqliteSynchronous = 'FULL' | 'EXTRA';

export interface SqliteStoreOptions {
  /** The database file (created if missing), or ':memory:'. */
  readonly path: string;
  /** Open read-only: the ledger rebuilds its state, and every admission fails closed. Default false. */
  readonly readonly?: boolean;
  /** Longest wait for another writer's lock, then SQLITE_BUSY → `ledger_unavailable`. Default 5,000. */
  readonly busyTimeoutMs?: number;
  /** Durability of each commit. 'FULL' (default) or 'EXTRA'; weaker settings are refused. */
  readonly synchronous?: SqliteSynchronous;
  /**
   * Write a snapshot when the head is at least this many events past the newest one (more for big
   * states: one event per 256 bytes of state JSON). 0 never writes. Default 2,000.
   */
  readonly snapshotEvery?: number;
  /**
   * Group commit: each batch waits one turn of the event loop, so the requests that arrive in that
   * turn (calls of several sessions, tools settling together) share one transaction and one flush.
   * For a server with concurrent callers (`atc proxy` and `atc gateway` turn it on); a lone call
   * waits microseconds more. Ignored for ':memory:'. Default false: a batch starts on a microtask.
   */
  readonly groupCommit?: boolean;
  /** 'tail' (default): open from the newest bound snapshot and check the events after it. 'full': check from seq 1. */
  readonly verifyOnOpen?: 'tail' | 'full';
  /** Where the numbered migrations live. Default: the package's migrations/ directory. */
  readonly migrationsDir?: string;
  /**
   * With `readonly: true`, a file SQLite cannot open in place (a read-only directory or medium) is read
   * into a private in-memory copy up to this many bytes; larger files are refused. Default 256 MiB.
   */
  readonly readonlyCopyMaxBytes?: number;
}

/** The durable, shared event store (docs/storage.md). */
export interface SqliteEventStore extends SharedEventStore, SnapshotEventStore, JournaledStore, EventHashSource {
  readonly path: string;
  /** Whether appends are impossible (opened read-only, or the file is not writable). */
  readonly readonly: boolean;
  /** The seq of the snapshot the last `latestSnapshot()` returned, if any. */
  readonly openedFromSnapshotSeq: number | undefined;
  close(): void;
}

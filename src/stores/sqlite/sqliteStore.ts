import Database from 'better-sqlite3';
import { genesisHash, type LedgerEvent } from '../../domain/events';
import type { LedgerState } from '../../domain/state';
import { LedgerError } from '../../errors';
import { isMemoryPath, openConnection } from './sqliteConnection';
import type { SqliteEventStore, SqliteStoreOptions } from './sqliteStoreOptions';
import { eventOfBody, rowOf } from '../shared/eventRows';
import { snapshotGap } from '../shared/snapshotPolicy';
import { latestSnapshotInfo, readLatestSnapshot, readSnapshotFollowerText, writeSnapshot } from './sqliteSnapshots';
import { BusyTimeoutSwitch } from './sqliteBusyTimeout';
import { systemDeps, WriteLock } from './sqliteWriteLock';
import { fileJournal } from '../fileJournal';
import { memoryJournal, type SettlementJournal } from '../../stream/ports/settlementJournal';

export type { SqliteStoreOptions, SqliteEventStore } from './sqliteStoreOptions';

export const sqliteDefaults = { busyTimeoutMs: 5_000, snapshotEvery: 2_000, synchronous: 'FULL' } as const;
/** Snapshot writes never wait long for the lock: a skipped snapshot only costs speed. */
const snapshotBusyTimeoutMs = 100;

class SqliteStore implements SqliteEventStore {
  readonly readonly: boolean;
  /** Asked for `groupCommit` on a file (whose commits flush): batches gather for a turn of the event loop. */
  readonly gathersBatches: boolean;
  /** Settlements a ledger could not append yet: files in `<path>-settlements/` (docs/storage.md), so a crash loses none. */
  readonly settlements: SettlementJournal;
  openedFromSnapshotSeq: number | undefined;
  private readonly db: Database.Database;
  private readonly insert: Database.Statement;
  private readonly hashAt: Database.Statement;
  private readonly bodiesAfter: Database.Statement;
  private readonly hashesBetween: Database.Statement;
  /** Prepared once, as better-sqlite3's own transaction() does: `exec` parses the SQL on every call (≈ 6–8 µs each, four per proxied call). */
  private readonly beginStatement: Database.Statement;
  private readonly commitStatement: Database.Statement;
  private readonly writeLock: WriteLock;
  private readonly busyTimeout: BusyTimeoutSwitch;
  /** The last SQLITE_BUSY from a failed BEGIN IMMEDIATE: what the caller sees when the wait runs out. */
  private lastBusy: unknown;
  private inExclusive = false;
  /** Whether the current transaction read events another writer appended (contention: hand off). */
  private sawForeign = false;
  private lastSnapshotSeq: number;
  private lastSnapshotBytes: number;
  private closed = false;

  constructor(
    readonly path: string,
    private readonly options: Required<Pick<SqliteStoreOptions, 'busyTimeoutMs' | 'snapshotEvery' | 'verifyOnOpen' | 'groupCommit'>>,
    connection: { readonly db: Database.Database; readonly readonly: boolean },
  ) {
    this.db = connection.db;
    this.readonly = connection.readonly;
    this.gathersBatches = options.groupCommit && !isMemoryPath(path);
    this.settlements = isMemoryPath(path) ? memoryJournal() : fileJournal(`${path}-settlements`);
    // Positional parameters: binding an object by name costs ≈ 9 µs more per row.
    this.insert = this.db.prepare('INSERT INTO events (seq, type, at, grant_id, tool, call_id, reason, input_bytes, hash, prev_hash, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
    this.hashAt = this.db.prepare('SELECT hash FROM events WHERE seq = ?').pluck();
    this.bodiesAfter = this.db.prepare('SELECT body FROM events WHERE seq > ? ORDER BY seq').pluck();
    this.hashesBetween = this.db.prepare('SELECT hash FROM events WHERE seq > ? AND seq <= ? ORDER BY seq').pluck();
    this.beginStatement = this.db.prepare('BEGIN IMMEDIATE');
    this.commitStatement = this.db.prepare('COMMIT');
    ({ seq: this.lastSnapshotSeq, bytes: this.lastSnapshotBytes } = latestSnapshotInfo(this.db));
    this.writeLock = new WriteLock(options.busyTimeoutMs, { ...systemDeps, tryBegin: () => this.tryBegin() });
    this.busyTimeout = new BusyTimeoutSwitch(this.db, options.busyTimeoutMs);
  }

  load(): Iterable<LedgerEvent> {
    return this.loadAfter(0);
  }

  *loadAfter(afterSeq: number): Iterable<LedgerEvent> {
    this.busyTimeout.forRead();
    // Streams row by row (one read transaction), so a long log is never held in memory here.
    for (const body of this.bodiesAfter.iterate(afterSeq)) yield eventOfBody(body as string);
  }

  *eventHashes(afterSeq: number, throughSeq: number): Iterable<string> {
    this.busyTimeout.forRead();
    for (const hash of this.hashesBetween.iterate(afterSeq, throughSeq)) yield hash as string;
  }

  snapshotFollowerText(seq: number): string | undefined {
    this.busyTimeout.forRead();
    return readSnapshotFollowerText(this.db, seq);
  }

  readAfter(afterSeq: number): readonly LedgerEvent[] {
    this.busyTimeout.forRead();
    return (this.bodiesAfter.all(afterSeq) as string[]).map(eventOfBody);
  }

  exclusive<T>(afterSeq: number, fn: (foreign: readonly LedgerEvent[]) => T): T {
    if (this.inExclusive) throw new LedgerError('store_failed', 'exclusive() is not reentrant');
    return this.transaction(() => {
      this.inExclusive = true;
      try {
        const foreign = this.readAfter(afterSeq);
        this.sawForeign = foreign.length > 0;
        return fn(foreign);
      } finally {
        this.inExclusive = false;
      }
    });
  }

  append(events: readonly LedgerEvent[]): void {
    if (events.length === 0) return;
    if (this.inExclusive) this.insertBatch(events);
    else this.transaction(() => this.insertBatch(events));
  }

  latestSnapshot(): LedgerState | undefined {
    this.openedFromSnapshotSeq = undefined;
    if (this.options.verifyOnOpen === 'full') return undefined;
    this.busyTimeout.forRead();
    const state = readLatestSnapshot(this.db);
    this.openedFromSnapshotSeq = state?.head.seq;
    return state;
  }

  offerSnapshot(state: LedgerState, followerText?: () => string): void {
    const every = this.options.snapshotEvery;
    if (this.readonly || this.closed || every === 0 || this.db.inTransaction) return;
    if (state.head.seq - this.lastSnapshotSeq < snapshotGap(every, this.lastSnapshotBytes)) return;
    try {
      // Another writer sharing the file may have just written one.
      this.busyTimeout.forRead();
      const newest = latestSnapshotInfo(this.db);
      if (state.head.seq - newest.seq >= snapshotGap(every, newest.bytes)) {
        const begin = (): void => this.beginImmediate(Math.min(snapshotBusyTimeoutMs, this.options.busyTimeoutMs));
        this.lastSnapshotBytes = writeSnapshot(this.db, state, begin, followerText).bytes;
        this.writeLock.released(false);
      } else this.lastSnapshotBytes = newest.bytes;
    } catch {
      // A snapshot is only a cache: failing to write one (busy, disk full) changes no decision.
    } finally {
      this.lastSnapshotSeq = state.head.seq;
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.db.close();
  }

  /** BEGIN IMMEDIATE … COMMIT; after any error, rolls back whatever SQLite did not already roll back. */
  private transaction<T>(fn: () => T): T {
    this.beginImmediate();
    this.sawForeign = false;
    try {
      const result = fn();
      this.commitStatement.run();
      this.writeLock.released(this.sawForeign);
      return result;
    } catch (error) {
      this.writeLock.released(this.sawForeign);
      if (this.db.inTransaction) {
        try {
          this.db.exec('ROLLBACK');
        } catch {
          // The original error is what the caller must see; the connection stays failed closed.
        }
      }
      throw sqliteFailure(error);
    }
  }

  /** Takes the write lock through WriteLock: bounded by busyTimeoutMs, then SQLITE_BUSY → ledger_unavailable. */
  private beginImmediate(timeoutMs = this.options.busyTimeoutMs): void {
    this.lastBusy = undefined;
    let taken: boolean;
    // BEGIN IMMEDIATE is retried by WriteLock (fair, bounded); reads outside a transaction keep
    // SQLite's handler (sqliteBusyTimeout.ts).
    try {
      this.busyTimeout.forBegin();
      taken = this.writeLock.acquire(timeoutMs);
    } catch (error) {
      // Any SQLite error here (even from a pragma) is the store's to classify; never leave a
      // transaction open behind it.
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw sqliteFailure(error);
    }
    if (!taken) throw sqliteFailure(this.lastBusy ?? new LedgerError('ledger_unavailable', 'the SQLite log stayed locked by another writer'));
  }

  /** One BEGIN IMMEDIATE without waiting: false when another writer holds the lock. */
  private tryBegin(): boolean {
    try {
      this.beginStatement.run();
      return true;
    } catch (error) {
      if (!isBusy(error)) throw error;
      this.lastBusy = error;
      return false;
    }
  }

  /** Inserts a batch that must continue the stored chain exactly (no gap, no fork). */
  private insertBatch(events: readonly LedgerEvent[]): void {
    const first = events[0] as LedgerEvent;
    const storedPrev = first.seq === 1 ? genesisHash : (this.hashAt.get(first.seq - 1) as string | undefined);
    if (storedPrev !== first.prevHash) throw new LedgerError('store_failed', `append at seq ${first.seq} does not continue the stored log`);
    let previous: LedgerEvent | undefined;
    for (const event of events) {
      if (previous !== undefined && (event.seq !== previous.seq + 1 || event.prevHash !== previous.hash)) {
        throw new LedgerError('store_failed', `appended batch does not chain at seq ${event.seq}`);
      }
      const r = rowOf(event);
      this.insert.run(r.seq, r.type, r.at, r.grant_id, r.tool, r.call_id, r.reason, r.input_bytes, r.hash, r.prev_hash, r.body);
      previous = event;
    }
  }
}

/**
 * The SQLite result code of an error better-sqlite3 threw, by shape rather than `instanceof`: the
 * native addon keeps the SqliteError class (and realm) of the first copy of the module loaded in the
 * process, so with a second copy (jest's per-file registries and contexts, bundlers) `instanceof`
 * fails, even `instanceof Error`.
 */
function sqliteCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || (error as { name?: unknown }).name !== 'SqliteError') return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : undefined;
}

/** SQLITE_BUSY / SQLITE_LOCKED, extended codes too (SQLITE_BUSY_TIMEOUT, SQLITE_LOCKED_SHAREDCACHE…). */
function isBusy(error: unknown): boolean {
  const code = sqliteCode(error);
  return code !== undefined && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

function sqliteFailure(error: unknown): unknown {
  const code = sqliteCode(error);
  if (code === undefined) return error;
  if (isBusy(error)) {
    return new LedgerError('ledger_unavailable', `the SQLite log stayed locked by another writer (${code})`, { cause: error });
  }
  return new LedgerError('store_failed', `the SQLite log could not record the batch (${code})`, { cause: error });
}

/**
 * A durable event store in one SQLite file, shareable by ledgers in several threads and processes:
 * each batch is decided and appended inside one BEGIN IMMEDIATE transaction (see docs/storage.md).
 */
export function sqliteStore(options: SqliteStoreOptions): SqliteEventStore {
  if (options === null || typeof options !== 'object' || typeof options.path !== 'string') throw new TypeError('sqliteStore needs { path: string }');
  const busyTimeoutMs = options.busyTimeoutMs ?? sqliteDefaults.busyTimeoutMs;
  const snapshotEvery = options.snapshotEvery ?? sqliteDefaults.snapshotEvery;
  const synchronous = options.synchronous ?? sqliteDefaults.synchronous;
  const verifyOnOpen = options.verifyOnOpen ?? 'tail';
  if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0 || busyTimeoutMs > 600_000) throw new TypeError('busyTimeoutMs must be an integer from 0 to 600,000');
  if (!Number.isSafeInteger(snapshotEvery) || snapshotEvery < 0) throw new TypeError('snapshotEvery must be a non-negative integer');
  if (synchronous !== 'FULL' && synchronous !== 'EXTRA') throw new TypeError("synchronous must be 'FULL' or 'EXTRA'");
  if (verifyOnOpen !== 'tail' && verifyOnOpen !== 'full') throw new TypeError("verifyOnOpen must be 'tail' or 'full'");
  const groupCommit = options.groupCommit ?? false;
  if (typeof groupCommit !== 'boolean') throw new TypeError('groupCommit must be a boolean');
  if (options.readonlyCopyMaxBytes !== undefined && (!Number.isSafeInteger(options.readonlyCopyMaxBytes) || options.readonlyCopyMaxBytes < 0)) {
    throw new TypeError('readonlyCopyMaxBytes must be a non-negative integer');
  }
  const connection = openConnection({
    path: options.path,
    readonly: options.readonly === true,
    busyTimeoutMs,
    synchronous,
    ...(options.migrationsDir !== undefined ? { migrationsDir: options.migrationsDir } : {}),
    ...(options.readonlyCopyMaxBytes !== undefined ? { readonlyCopyMaxBytes: options.readonlyCopyMaxBytes } : {}),
  });
  return new SqliteStore(options.path, { busyTimeoutMs, snapshotEvery, verifyOnOpen, groupCommit }, connection);
}

import type { Pool } from 'pg';
import type { LedgerEvent } from '../../domain/events';
import type { LedgerState } from '../../domain/state';
import { LedgerError } from '../../errors';
import type { AsyncEventStore } from '../../stream/ports/eventStore';
import { checkContinues } from './postgresAppend';
import { isRetryable, postgresFailure } from './postgresErrors';
import { appendAndCommit, appendIfHead, beginLocked, eventsOfRows, flushWal, type LockProtocol, type PostgresTables } from './postgresLocking';
import { migratePostgres, postgresMigrations } from './postgresMigrations';
import { PostgresPool, type HeldClient } from './postgresPool';
import { ForeignPrefetch } from './postgresPrefetch';
import { PostgresSettlementJournal } from './postgresSettlements';
import { readLatestSnapshot, SnapshotWriter } from './postgresSnapshots';
import { quoteIdent, schemaNamePattern } from './postgresSql';

export interface PostgresStoreOptions {
  /** `postgres://user@host:port/db`; the store creates (and on close ends) its own pool. */
  readonly connectionString?: string;
  /** Or a pool of yours (pg 8): the store never ends it. */
  readonly pool?: Pool;
  /** The schema holding the ledger's tables (created by the first migration). Default 'atc'. */
  readonly schema?: string;
  /**
   * The longest a command waits for the server, queueing included, before it fails closed
   * (`ledger_unavailable` for a call, LedgerError for a host command and for openLedger). Default 10,000.
   */
  readonly timeoutMs?: number;
  /** Transient failures (lost connection, deadlock, serialization) retried per batch. Default 6. */
  readonly retriesMax?: number;
  /** How often an idle ledger folds other hosts' events, in ms: 10 to 1,000. Default 1,000. */
  readonly catchUpIntervalMs?: number;
  /** Snapshot when the head is at least this many events past the newest one; 0 never. Default 2,000. */
  readonly snapshotEvery?: number;
  /** Clients the store's own pool may open. Default 4. */
  readonly poolSizeMax?: number;
  /** Apply no migrations; require the schema to be up to date (the CLI). Default false. */
  readonly readonly?: boolean;
  /** Where the numbered PostgreSQL migrations live. Default: the package's migrations/postgres/. */
  readonly migrationsDir?: string;
  /**
   * A directory on this host's disk for settlements the server could not take (docs/postgres.md),
   * so that the next ledger opened on this log with the same directory settles them, after a crash
   * too. Default: none (they are kept in this process's memory only).
   */
  readonly settlementsDir?: string;
}

export interface PostgresEventStore extends AsyncEventStore {
  readonly schema: string;
  /** The seq of the snapshot the last `latestSnapshot()` returned, if any. */
  readonly openedFromSnapshotSeq: number | undefined;
  /** Snapshots this store has written; hosts sharing a log take turns (docs/postgres.md, Schema). */
  readonly snapshotsWritten: number;
}

export const postgresDefaults = { schema: 'atc', timeoutMs: 10_000, retriesMax: 6, catchUpIntervalMs: 1_000, snapshotEvery: 2_000, poolSizeMax: 4 } as const;
/** Rows per round trip when reading the log (bounded memory per read, each page within the deadline). */
const readPageRows = 20_000;

type Settings = Required<Pick<PostgresStoreOptions, 'schema' | 'timeoutMs' | 'retriesMax' | 'catchUpIntervalMs' | 'snapshotEvery' | 'readonly'>> & {
  readonly migrationsDir: string | undefined;
  readonly settlementsDir: string | undefined;
};

/** Internal knobs: the locking protocol (measured in experiments/bench), for benchmarks and tests. */
export interface PostgresInternals {
  readonly protocol?: LockProtocol;
  /** Whether a batch may first be tried in one round trip (default true; false measures the two-trip protocol alone). */
  readonly optimistic?: boolean;
  /**
   * Whether a write transaction commits asynchronously and flushes the WAL after releasing the lock,
   * in both shapes (default true; false measures the synchronous commit it replaced).
   */
  readonly asyncCommit?: boolean;
  /**
   * Whether the two-round-trip shape's flush travels in the COMMIT's message (default true; false
   * sends it as a message of its own, one more round trip per batch: the protocol before, measured in
   * experiments/bench). The one-round-trip shape always sends it in the COMMIT's message.
   */
  readonly flushWithCommit?: boolean;
  /**
   * Whether other writers' events are received by NOTIFY and parsed and hash-checked before the lock
   * (`ForeignPrefetch`). Default false: on the benchmark's 2 cores it halved the client's part of the
   * lock's hold at 16 processes but cost more client CPU than it saved (docs/postgres.md, Figures).
   */
  readonly prefetch?: boolean;
}

export class PostgresStore implements PostgresEventStore {
  readonly kind = 'async';
  readonly schema: string;
  readonly timeoutMs: number;
  readonly catchUpIntervalMs: number;
  openedFromSnapshotSeq: number | undefined;
  /** With `settlementsDir`: the journal the ledger keeps refused settlements in (JournaledStore). */
  readonly settlements: PostgresSettlementJournal | undefined;
  protected readonly tables: PostgresTables;
  protected readonly protocol: LockProtocol;
  private readonly optimisticAllowed: boolean;
  private readonly asyncCommit: boolean;
  private readonly flushWithCommit: boolean;
  /** Other writers' events, parsed and hash-checked before they are needed under the lock (internal; tests observe it). */
  readonly prefetch: ForeignPrefetch | undefined;
  /**
   * Whether the next batch is first tried in one round trip, decided against this ledger's own view:
   * yes while the last write transaction found no events from other writers (the head was where this
   * ledger left it), so that under contention no attempt is wasted.
   */
  private headLikelyOurs = true;
  private readonly snapshots: SnapshotWriter;
  private closed = false;

  constructor(
    protected readonly pool: PostgresPool,
    protected readonly settings: Settings,
    internals: PostgresInternals = {},
  ) {
    this.schema = settings.schema;
    this.timeoutMs = settings.timeoutMs;
    this.catchUpIntervalMs = settings.catchUpIntervalMs;
    this.protocol = internals.protocol ?? 'lockRow';
    this.optimisticAllowed = internals.optimistic ?? true;
    this.asyncCommit = internals.asyncCommit ?? true;
    this.flushWithCommit = internals.flushWithCommit ?? true;
    this.prefetch = settings.readonly || internals.prefetch !== true ? undefined : new ForeignPrefetch({ ...pool.pool.options, connectionTimeoutMillis: Math.min(settings.timeoutMs, 10_000) }, settings.schema);
    this.settlements = settings.settlementsDir === undefined || settings.readonly ? undefined : new PostgresSettlementJournal(settings.settlementsDir, settings.schema);
    const s = quoteIdent(settings.schema);
    this.tables = { schema: settings.schema, events: `${s}.events`, head: `${s}.head`, snapshots: `${s}.snapshots`, logLock: `${s}.log_lock`, snapshotLock: `${s}.snapshot_lock` };
    this.snapshots = new SnapshotWriter(pool, this.tables, settings.snapshotEvery, settings.readonly, Math.min(settings.timeoutMs, 2_000));
  }

  async open(): Promise<void> {
    this.assertOpen();
    await this.withClient('open the log', async (client) => {
      await migratePostgres(client, this.schema, postgresMigrations(this.settings.migrationsDir), this.settings.readonly);
    });
    await this.snapshots.load();
    this.prefetch?.start();
  }

  async latestSnapshot(): Promise<LedgerState | undefined> {
    this.openedFromSnapshotSeq = undefined;
    const state = await this.withClient('read snapshots', (client) => readLatestSnapshot(client, this.tables));
    this.openedFromSnapshotSeq = state?.head.seq;
    return state;
  }

  async readAfter(afterSeq: number, afterHash?: string): Promise<readonly LedgerEvent[]> {
    const events: LedgerEvent[] = [];
    for (let from = afterSeq, fromHash = afterHash; ; ) {
      // Each page is its own bounded round trip: a long log is slow to read, not "unavailable". The
      // row at `from` itself comes back as its hash only, to check the log still holds that head.
      const rows = await this.withClient('read the log', async (client) => {
        const result = await client.query(
          `SELECT seq, CASE WHEN seq = $1 THEN hash ELSE body END AS body FROM ${this.tables.events} WHERE seq >= $1 ORDER BY seq LIMIT ${readPageRows + 1}`,
          [from],
        );
        return result.rows as { seq: string; body: string }[];
      });
      const headHash = rows[0] !== undefined && Number(rows[0].seq) === from ? rows[0].body : undefined;
      if (from > 0 && fromHash !== undefined) checkHead(from, fromHash, headHash);
      const page = eventsOfRows(headHash === undefined ? rows : rows.slice(1), this.prefetch);
      for (const event of page) events.push(event);
      if (from === 0) this.settlements?.seen(page);
      if (page.length < readPageRows) break;
      const last = page[page.length - 1] as LedgerEvent;
      from = last.seq;
      fromHash = last.hash;
    }
    // What another writer committed asynchronously may be visible before it is durable: flush before
    // the ledger folds (and acts on) it, so that it never holds an event a crash could take back.
    if (events.length > 0 && !this.settings.readonly) await this.withClient('flush the log', flushWal);
    return events;
  }

  async exclusive(afterSeq: number, decide: (foreign: readonly LedgerEvent[]) => readonly LedgerEvent[], deadline: number, afterHash?: string): Promise<void> {
    this.assertOpen();
    if (this.settings.readonly) throw new LedgerError('store_failed', 'the PostgreSQL store was opened read-only');
    /** The first event of an attempt whose COMMIT may have landed although the client saw an error. */
    let uncertain: LedgerEvent | undefined;
    /** Events after `afterSeq` a one-round-trip attempt found (the head had moved), read again by nobody. */
    let known: readonly LedgerEvent[] = [];
    let optimistic = this.optimisticAllowed && this.headLikelyOurs;
    // What this ledger folded is never needed again; a listener that failed connects again (in the background).
    this.prefetch?.forget(afterSeq);
    this.prefetch?.start();
    for (let attempt = 0; ; attempt++) {
      let client: HeldClient | undefined;
      let sent: LedgerEvent | undefined;
      try {
        client = await this.pool.connect(deadline);
        if (optimistic) {
          // Tried once per batch, before any failure (after one, whether it committed is not known).
          optimistic = false;
          const events = decide([]);
          if (events.length > 0) {
            const prevHash = (events[0] as LedgerEvent).prevHash;
            checkContinues({ seq: afterSeq, hash: prevHash }, events);
            sent = events[0];
            // Committed without waiting for the disk, then flushed outside the lock in the same
            // message: durable once it returns. An error leaves `sent` uncertain: the retry looks for it.
            const outcome = await appendIfHead(client, this.tables, this.protocol, afterSeq, events, deadline - performance.now(), this.asyncCommit, this.prefetch);
            if (outcome.committed) return this.committed(afterSeq, events);
            sent = undefined;
            if (afterSeq > 0) checkHead(afterSeq, prevHash, outcome.headHash);
            known = outcome.foreign;
          }
          // Nothing to append, or the head had moved: decide again under the lock, knowing what was read.
        }
        const knownLast = known[known.length - 1];
        const readFrom = knownLast?.seq ?? afterSeq;
        const read = await beginLocked(client, this.tables, this.protocol, readFrom, deadline - performance.now(), this.prefetch);
        const readFromHash = knownLast?.hash ?? afterHash;
        if (readFrom > 0 && readFromHash !== undefined) checkHead(readFrom, readFromHash, read.headHash);
        const foreign = known.length === 0 ? read.foreign : [...known, ...read.foreign];
        if (uncertain !== undefined && landed(foreign, uncertain)) {
          // The earlier attempt committed: its decisions stand, and must not be made twice. It may
          // have committed asynchronously and not been flushed: flush before it is acknowledged.
          await client.query('ROLLBACK');
          await flushWal(client);
          return this.committed(afterSeq, foreign);
        }
        this.headLikelyOurs = foreign.length === 0;
        const events = decide(foreign);
        const last = foreign[foreign.length - 1];
        if (events.length > 0) checkContinues(last !== undefined ? last : { seq: afterSeq, hash: (events[0] as LedgerEvent).prevHash }, events);
        sent = events[0];
        // The lock was held across a round trip, so others may be waiting: COMMIT releases it without
        // waiting for the disk, and the flush after it (in the same message, outside the lock) makes
        // the batch (and the foreign events it was decided on) durable before anything is
        // acknowledged or folded. An error there leaves `sent` uncertain: the retry looks for it.
        const flush = this.asyncCommit && (events.length > 0 || foreign.length > 0);
        await appendAndCommit(client, this.tables, this.protocol, events, this.asyncCommit, flush && this.flushWithCommit, this.prefetch);
        if (flush && !this.flushWithCommit) await flushWal(client);
        return this.committed(afterSeq, foreign.length > 0 ? foreign : events);
      } catch (error) {
        client?.fail();
        if (sent !== undefined) uncertain = sent;
        if (!isRetryable(error) || attempt >= this.settings.retriesMax || performance.now() >= deadline || this.closed) throw postgresFailure(error, 'record the batch');
        await pause(attempt, deadline);
      } finally {
        client?.release();
      }
    }
  }

  /** After a commit: `events` follow `afterSeq` in the log (they may name it, for the settlement journal). */
  private committed(afterSeq: number, events: readonly LedgerEvent[]): void {
    if (afterSeq === 0) this.settlements?.seen(events);
  }

  get snapshotsWritten(): number {
    return this.snapshots.written;
  }

  offerSnapshot(state: LedgerState): void {
    if (!this.closed) this.snapshots.offer(state);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.snapshots.idle();
    await this.prefetch?.close();
    await this.pool.end();
  }

  /** One client for `fn`, within a fresh deadline; transient failures retried as in `exclusive`. */
  protected async withClient<T>(what: string, fn: (client: HeldClient) => Promise<T>): Promise<T> {
    this.assertOpen();
    const deadline = performance.now() + this.timeoutMs;
    for (let attempt = 0; ; attempt++) {
      let client: HeldClient | undefined;
      try {
        client = await this.pool.connect(deadline);
        return await fn(client);
      } catch (error) {
        client?.fail();
        if (!isRetryable(error) || attempt >= this.settings.retriesMax || performance.now() >= deadline || this.closed) throw postgresFailure(error, what);
        await pause(attempt, deadline);
      } finally {
        client?.release();
      }
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new LedgerError('closed', 'the PostgreSQL store is closed');
  }
}

/**
 * Refuses to go on from a head the log no longer holds: the database lost events this ledger folded
 * (a restore or a failover to a standby that had not received them). Appending after that head would
 * fork the log, so the batch fails closed; a ledger opened afresh rebuilds from what the log holds.
 */
function checkHead(seq: number, expected: string, stored: string | undefined): void {
  if (stored === expected) return;
  throw new LedgerError(
    'invalid_log',
    `the PostgreSQL log no longer holds this ledger's head (seq ${seq}): it lost events this ledger folded (restored or failed over?); open the ledger again to rebuild from the log`,
  );
}

function landed(foreign: readonly LedgerEvent[], first: LedgerEvent): boolean {
  return foreign.some((event) => event.seq === first.seq && event.hash === first.hash);
}

/** Exponential backoff with jitter (25 ms, 50 ms, … at most 1 s), never past the deadline. */
function pause(attempt: number, deadline: number): Promise<void> {
  const ms = Math.min(1_000, 25 * 2 ** attempt) * (0.5 + Math.random() / 2);
  const wait = Math.max(0, Math.min(ms, deadline - performance.now()));
  return new Promise((resolve) => setTimeout(resolve, wait));
}

function validated(options: PostgresStoreOptions): Settings {
  const schema = options.schema ?? postgresDefaults.schema;
  const timeoutMs = options.timeoutMs ?? postgresDefaults.timeoutMs;
  const retriesMax = options.retriesMax ?? postgresDefaults.retriesMax;
  const catchUpIntervalMs = options.catchUpIntervalMs ?? postgresDefaults.catchUpIntervalMs;
  const snapshotEvery = options.snapshotEvery ?? postgresDefaults.snapshotEvery;
  if (typeof schema !== 'string' || !schemaNamePattern.test(schema)) throw new TypeError(`schema must match ${schemaNamePattern}`);
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 100 || timeoutMs > 600_000) throw new TypeError('timeoutMs must be an integer from 100 to 600,000');
  if (!Number.isSafeInteger(retriesMax) || retriesMax < 0 || retriesMax > 100) throw new TypeError('retriesMax must be an integer from 0 to 100');
  if (!Number.isSafeInteger(catchUpIntervalMs) || catchUpIntervalMs < 10 || catchUpIntervalMs > 1_000) throw new TypeError('catchUpIntervalMs must be an integer from 10 to 1,000');
  if (!Number.isSafeInteger(snapshotEvery) || snapshotEvery < 0) throw new TypeError('snapshotEvery must be a non-negative integer');
  const settlementsDir = options.settlementsDir;
  if (settlementsDir !== undefined && (typeof settlementsDir !== 'string' || settlementsDir.length === 0)) throw new TypeError('settlementsDir must be a non-empty path');
  return { schema, timeoutMs, retriesMax, catchUpIntervalMs, snapshotEvery, readonly: options.readonly === true, migrationsDir: options.migrationsDir, settlementsDir };
}

/** The pool the options name: the caller's, or a new one from the connection string. */
export function poolOf(options: PostgresStoreOptions, timeoutMs: number): PostgresPool {
  const hasUrl = typeof options.connectionString === 'string' && options.connectionString.length > 0;
  const hasPool = options.pool !== undefined && options.pool !== null;
  if (hasUrl === hasPool) throw new TypeError('postgresStore needs exactly one of { connectionString } or { pool }');
  const poolSizeMax = options.poolSizeMax ?? postgresDefaults.poolSizeMax;
  if (!Number.isSafeInteger(poolSizeMax) || poolSizeMax < 1 || poolSizeMax > 100) throw new TypeError('poolSizeMax must be an integer from 1 to 100');
  if (hasPool) {
    const pool = options.pool as Pool;
    if (typeof pool.connect !== 'function' || typeof pool.on !== 'function') throw new TypeError('pool must be a pg Pool');
    return new PostgresPool(pool, false);
  }
  return PostgresPool.create(options.connectionString as string, timeoutMs, poolSizeMax);
}

/** Builds the store with internal knobs (benchmarks, tests). */
export function createPostgresStore(options: PostgresStoreOptions, internals: PostgresInternals = {}): PostgresStore {
  if (options === null || typeof options !== 'object') throw new TypeError('postgresStore needs { connectionString } or { pool }');
  const settings = validated(options);
  return new PostgresStore(poolOf(options, settings.timeoutMs), settings, internals);
}

/**
 * A durable event store in PostgreSQL, shared by ledgers on many hosts: each batch is decided and
 * appended in one transaction holding the log's lock (docs/postgres.md). Open it with `openLedger`.
 */
export function postgresStore(options: PostgresStoreOptions): PostgresEventStore {
  return createPostgresStore(options);
}

import type { LedgerEvent } from '../../domain/events';
import { eventOfBody, rowOf } from '../shared/eventRows';
import { LedgerError } from '../../errors';
import { insertBatchStatement, insertBatchIfHeadStatement } from './postgresAppend';
import { notifyingInsert, notifyStatement, type ForeignPrefetch } from './postgresPrefetch';
import type { HeldClient } from './postgresPool';
import { intLiteral } from './postgresSql';

/** Where the store's tables are: schema-qualified, quoted names. */
export interface PostgresTables {
  readonly schema: string;
  readonly events: string;
  readonly head: string;
  readonly snapshots: string;
  /** The one-row table whose row a write transaction locks (migration 0003). */
  readonly logLock: string;
  /** The one-row table a snapshot writer row-locks, skipping when another holds it (migration 0003). */
  readonly snapshotLock: string;
}

/**
 * How a write transaction excludes the others. Both hold a transaction-scoped lock (released by
 * COMMIT or ROLLBACK, or by the server when the connection dies), so they work behind PgBouncer in
 * transaction mode, and both need a privilege on a table of the ledger's schema, so a role the owner
 * granted nothing cannot take them (the advisory lock they replace needed none: any role could stop
 * every host); docs/postgres.md compares them (Locks).
 * - 'lockRow': `SELECT … FOR UPDATE` of the one row of `log_lock`; writes only the events.
 * - 'headRow': `SELECT … FOR UPDATE` of the one-row head table, updated with every batch.
 */
export type LockProtocol = 'lockRow' | 'headRow';

/**
 * BEGIN, and every wait bounded by what is left of the deadline, then the log's lock: a row lock,
 * which needs SELECT and UPDATE on its table, and which no table-level lock short of EXCLUSIVE
 * conflicts with (those need a grant, or ownership, before they are queued for), so neither readers
 * nor a role with only USAGE on the schema can hold the writers up.
 */
function beginAndLock(tables: PostgresTables, protocol: LockProtocol, remainingMs: number): string {
  const ms = intLiteral(Math.max(1, Math.ceil(remainingMs)));
  const lock = protocol === 'lockRow' ? `SELECT true AS locked FROM ${tables.logLock} FOR UPDATE` : `SELECT seq FROM ${tables.head} WHERE id FOR UPDATE`;
  return (
    `BEGIN ISOLATION LEVEL READ COMMITTED; SET LOCAL lock_timeout = ${ms}; SET LOCAL statement_timeout = ${ms}; ` +
    `SET LOCAL idle_in_transaction_session_timeout = ${ms}; ${lock}`
  );
}

/** How many statements `beginAndLock` sends (their results come first). */
const statementsToLock = 5;

/**
 * Fails closed unless the lock statement locked exactly one row: with the row gone (only the owner can
 * delete it) the statement would lock nothing and writers would not exclude each other.
 */
function assertLocked(results: readonly { rowCount?: number | null }[]): void {
  if (results[statementsToLock - 1]?.rowCount !== 1) throw new LedgerError('store_failed', 'the log\'s lock row is missing (migration 0003 inserts it): refusing to write without the lock');
}

/**
 * The events after `afterSeq`. Without prefetching, their bodies come back joined into one text
 * (a canonical body holds no line break): under contention the locked read returns every event the
 * hosts ahead appended (≈ 118 at 16 processes), and one value instead of a row each spares the
 * client a row's parse per event while it holds the lock. With prefetching, a row each, by seq.
 */
export function readAfterStatement(tables: PostgresTables, afterSeq: number, prefetch: ForeignPrefetch | undefined): string {
  const after = afterRange(afterSeq);
  if (prefetch === undefined) return `SELECT string_agg(body, E'\\n' ORDER BY seq) AS bodies FROM ${tables.events} WHERE ${after}`;
  return `SELECT seq, body FROM ${tables.events} WHERE ${after} ORDER BY seq`;
}

/**
 * `seq > afterSeq`, written as a closed range. Without statistics (a new log, or one growing faster
 * than autovacuum analyzes it) the planner guesses that a third of the table satisfies an open
 * `seq > n` and, on narrow rows, scans the whole log, under the lock (measured: 5 ms at 50,000 events,
 * growing with the log); for a range it guesses 0.5 % and reads the primary key. With statistics
 * both forms are planned from the histogram alike. The upper bound is bigint's largest value.
 */
function afterRange(afterSeq: number): string {
  return `seq > ${intLiteral(afterSeq)} AND seq <= 9223372036854775807`;
}

/** The rows' events: the prefetched one where its body is the row's exactly, else the row's body parsed. */
export function eventsOfRows(rows: readonly { seq: string; body: string }[], prefetch: ForeignPrefetch | undefined): LedgerEvent[] {
  if (prefetch === undefined) return rows.map((row) => eventOfBody(row.body));
  return rows.map((row) => prefetch.take(Number(row.seq), row.body) ?? eventOfBody(row.body));
}

/** The events `readAfterStatement` returned. */
function bodiesOf(result: { rows?: unknown[] } | undefined, prefetch: ForeignPrefetch | undefined): LedgerEvent[] {
  const rows = (result?.rows ?? []) as { seq: string; body: string; bodies?: string | null }[];
  if (prefetch !== undefined) return eventsOfRows(rows, prefetch);
  const joined = rows[0]?.bodies;
  if (joined === undefined || joined === null) return [];
  return joined.split('\n').map(eventOfBody);
}

/**
 * The stored hash at `afterSeq` (no row when the log is shorter), so that a transaction can check the
 * log still holds the head this ledger folded: a database restored or failed over to an earlier point
 * has lost it, and appending after it would fork the log (docs/postgres.md, "A log that lost events").
 */
export function headStatement(tables: PostgresTables, afterSeq: number): string {
  return `SELECT hash FROM ${tables.events} WHERE seq = ${intLiteral(afterSeq)}`;
}

function hashOf(result: { rows?: unknown[] } | undefined): string | undefined {
  return ((result?.rows ?? []) as { hash: string }[])[0]?.hash;
}

/** What a locked read found: the stored hash at the ledger's head, and the events after it. */
export interface LockedRead {
  readonly headHash: string | undefined;
  readonly foreign: LedgerEvent[];
}

/**
 * One round trip: BEGIN, bound every wait by what is left of the deadline, take the lock, check the
 * head and read the events after `afterSeq`. Under READ COMMITTED each statement reads a fresh
 * snapshot, so the read that follows the lock sees every transaction that held the lock before (they
 * have committed). The lock stays held: the caller decides, then calls `appendAndCommit`.
 */
export async function beginLocked(
  client: HeldClient,
  tables: PostgresTables,
  protocol: LockProtocol,
  afterSeq: number,
  remainingMs: number,
  prefetch?: ForeignPrefetch,
): Promise<LockedRead> {
  const results = await client.queries(`${beginAndLock(tables, protocol, remainingMs)}; ${headStatement(tables, afterSeq)}; ${readAfterStatement(tables, afterSeq, prefetch)}`);
  assertLocked(results);
  return { headHash: hashOf(results[statementsToLock]), foreign: bodiesOf(results[statementsToLock + 1], prefetch) };
}

/**
 * What `appendIfHead` found: the batch committed, or nothing was written because the head had moved
 * (`foreign` follows it) or the log no longer holds the head the batch was decided on (`headHash`).
 */
export type IfHeadOutcome =
  | { readonly committed: true }
  | { readonly committed: false; readonly headHash: string | undefined; readonly foreign: LedgerEvent[] };

/**
 * The whole transaction in one round trip, for a batch decided before the lock (against this
 * ledger's own view, whose head is `afterSeq`): BEGIN, take the lock, read the stored head and the
 * events after `afterSeq`, insert the batch only if the head is the one it was decided on and nothing
 * follows it, COMMIT. The lock is never held across a round trip to the client. With `asyncCommit`
 * the COMMIT does not wait for the disk either (the next writer takes the lock meanwhile), and the
 * WAL flush runs after it in the same message, outside the lock: the server answers only once it
 * has, so a committed batch is durable when this resolves (docs/postgres.md, "Durability"). Without
 * it the COMMIT is synchronous, flushing under the lock (the protocol before, kept for the benchmark).
 * When the head had moved, nothing is inserted, COMMIT releases the lock, and the events read are
 * returned (flushed too, with `asyncCommit`) so that the caller can decide again, knowing them.
 */
export async function appendIfHead(
  client: HeldClient,
  tables: PostgresTables,
  protocol: LockProtocol,
  afterSeq: number,
  events: readonly LedgerEvent[],
  remainingMs: number,
  asyncCommit = true,
  prefetch?: ForeignPrefetch,
): Promise<IfHeadOutcome> {
  const first = events[0] as LedgerEvent;
  const last = events[events.length - 1] as LedgerEvent;
  const head = protocol === 'headRow' ? `UPDATE ${tables.head} SET seq = ${intLiteral(last.seq)}, hash = '${hexLiteral(last.hash)}' WHERE id AND seq = ${intLiteral(afterSeq)}; ` : '';
  // After the results read below (head, read, insert), so their positions do not move.
  const rows = events.map(rowOf);
  const notifyText = prefetch === undefined ? '' : notifyStatement(tables.events, rows, prefetch);
  const notify = notifyText === '' ? '' : `${notifyText}; `;
  const results = await client.queries(
    `${beginAndLock(tables, protocol, remainingMs)}; ${headStatement(tables, afterSeq)}; ${readAfterStatement(tables, afterSeq, prefetch)}; ` +
      `${insertBatchIfHeadStatement(tables.events, afterSeq, afterSeq === 0 ? undefined : hexLiteral(first.prevHash), rows)}; ${head}${notify}${commitStatement(asyncCommit, asyncCommit)}`,
  );
  // The results: BEGIN, three SET LOCALs and the lock, then the head, the read and the insert.
  assertLocked(results);
  const headHash = hashOf(results[statementsToLock]);
  const foreign = bodiesOf(results[statementsToLock + 1], prefetch);
  const inserted = results[statementsToLock + 2]?.rowCount ?? 0;
  const headHeld = afterSeq === 0 || headHash === first.prevHash;
  if (headHeld && foreign.length === 0 && inserted === events.length) return { committed: true };
  // Under the lock, "the head held, nothing after it" and "every row inserted" go together; anything else is not our protocol.
  if (inserted !== 0 || (headHeld && foreign.length === 0)) throw new LedgerError('store_failed', 'the conditional append found the log in an unexpected state');
  return { committed: false, headHash, foreign };
}

/**
 * Appends the batch (the head row too, for that protocol) and commits, in one round trip. With
 * `asyncCommit` the COMMIT returns (and releases the lock) once its record is in the server's WAL
 * buffers, without waiting for the disk; with `flush` too, the same message then runs the WAL flush
 * (`flushWalStatement`) as a transaction of its own, after the lock was released: the server answers
 * only once both have run, so the batch is durable when this resolves (docs/postgres.md, "Durability").
 * Why one message: a separate flush costs a round trip per batch, and under contention round trips
 * are most of a client's CPU. Without `flush` the caller must `flushWal` before it acknowledges or
 * folds anything; without `asyncCommit` the lock is held until the WAL is flushed.
 */
export async function appendAndCommit(
  client: HeldClient,
  tables: PostgresTables,
  protocol: LockProtocol,
  events: readonly LedgerEvent[],
  asyncCommit: boolean,
  flush = false,
  notify?: ForeignPrefetch,
): Promise<void> {
  const commit = commitStatement(asyncCommit, flush);
  if (events.length === 0) {
    await client.queries(commit);
    return;
  }
  const last = events[events.length - 1] as LedgerEvent;
  const head = protocol === 'headRow' ? `UPDATE ${tables.head} SET seq = ${intLiteral(last.seq)}, hash = '${hexLiteral(last.hash)}' WHERE id; ` : '';
  const insert = notify === undefined ? insertBatchStatement(tables.events, events) : notifyingInsert(tables.events, events, notify);
  await client.queries(`${insert}; ${head}${commit}`);
}

/**
 * Waits until every WAL record written so far is durable, as a synchronous commit would: a
 * transaction that writes a WAL record of its own (a transactional logical-decoding message, which
 * also takes an xid), committed at the session's `synchronous_commit` (the server's setting: a local
 * flush, or a synchronous standby's too). PostgreSQL flushes at commit only a transaction that has
 * both an xid and WAL of its own (xact.c, RecordTransactionCommit): `SELECT txid_current()` takes an
 * xid but writes nothing, so its commit is asynchronous and flushes nothing (measured: the flush LSN
 * did not move). WAL is one sequence, so this flush covers every earlier commit record, this ledger's
 * and other writers' alike; concurrent flushes from many hosts are written together (group commit).
 * The message is a few bytes of WAL, no row and no lock; any role may emit it, at any `wal_level`.
 */
export const flushWalStatement = "SELECT pg_logical_emit_message(true, 'atc/flush', '')";

export async function flushWal(client: HeldClient): Promise<void> {
  await client.query(flushWalStatement);
}

/** COMMIT, asynchronous or not; after an asynchronous one, optionally the WAL flush in the same message. */
function commitStatement(asyncCommit: boolean, flush: boolean): string {
  return (asyncCommit ? 'SET LOCAL synchronous_commit = off; COMMIT' : 'COMMIT') + (asyncCommit && flush ? `; ${flushWalStatement}` : '');
}

function hexLiteral(hash: string): string {
  if (!/^[0-9a-f]{64}$/.test(hash)) throw new TypeError('expected a SHA-256 hex digest');
  return hash;
}

import type { LedgerEvent } from '../../domain/events';
import { eventOfBody } from '../shared/eventRows';
import { LedgerError } from '../../errors';
import { insertBatchStatement, insertBatchIfHeadStatement } from './postgresAppend';
import type { HeldClient } from './postgresPool';
import { intLiteral } from './postgresSql';

/** Where the store's tables are: schema-qualified, quoted names. */
export interface PostgresTables {
  readonly schema: string;
  readonly events: string;
  readonly head: string;
  readonly snapshots: string;
}

/**
 * How a write transaction excludes the others. Both hold a transaction-scoped lock (released by
 * COMMIT or ROLLBACK, or by the server when the connection dies), so they work behind PgBouncer in
 * transaction mode; docs/postgres.md compares them.
 * - 'advisory': `pg_advisory_xact_lock` on a key derived from the schema; writes only the events.
 * - 'headRow': `SELECT … FOR UPDATE` of the one-row head table, updated with every batch.
 */
export type LockProtocol = 'advisory' | 'headRow';

/** Advisory lock namespace of the log ('atc1'); migrations use another. */
const logLockSpace = 0x61746331;

/** BEGIN, and every wait bounded by what is left of the deadline, then the log's lock. */
function beginAndLock(tables: PostgresTables, protocol: LockProtocol, remainingMs: number): string {
  const ms = intLiteral(Math.max(1, Math.ceil(remainingMs)));
  const lock =
    protocol === 'advisory' ? `SELECT pg_advisory_xact_lock(${logLockSpace}, hashtext('${tables.schema}'))` : `SELECT seq FROM ${tables.head} WHERE id FOR UPDATE`;
  return (
    `BEGIN ISOLATION LEVEL READ COMMITTED; SET LOCAL lock_timeout = ${ms}; SET LOCAL statement_timeout = ${ms}; ` +
    `SET LOCAL idle_in_transaction_session_timeout = ${ms}; ${lock}`
  );
}

/** How many statements `beginAndLock` sends (their results come first). */
const statementsToLock = 5;

function readAfterStatement(tables: PostgresTables, afterSeq: number): string {
  return `SELECT body FROM ${tables.events} WHERE seq > ${intLiteral(afterSeq)} ORDER BY seq`;
}

function bodiesOf(result: { rows?: unknown[] } | undefined): LedgerEvent[] {
  return ((result?.rows ?? []) as { body: string }[]).map((row) => eventOfBody(row.body));
}

/**
 * One round trip: BEGIN, bound every wait by what is left of the deadline, take the lock, and read
 * the events after `afterSeq`. Under READ COMMITTED each statement reads a fresh snapshot, so the
 * read that follows the lock sees every transaction that held the lock before (they have committed).
 * The lock stays held: the caller decides, then calls `appendAndCommit`.
 */
export async function beginLocked(client: HeldClient, tables: PostgresTables, protocol: LockProtocol, afterSeq: number, remainingMs: number): Promise<LedgerEvent[]> {
  const results = await client.queries(`${beginAndLock(tables, protocol, remainingMs)}; ${readAfterStatement(tables, afterSeq)}`);
  return bodiesOf(results[results.length - 1]);
}

/** What `appendIfHead` found: the batch committed, or the head had moved and nothing was written. */
export type IfHeadOutcome = { readonly committed: true } | { readonly committed: false; readonly foreign: LedgerEvent[] };

/**
 * The whole transaction in one round trip, for a batch decided before the lock (against this
 * ledger's own view, whose head is `afterSeq`): BEGIN, take the lock, read the events after
 * `afterSeq`, insert the batch only if there are none, COMMIT. The lock is held only while the server
 * runs these statements and flushes the commit, never across a round trip to the client. When the
 * head had moved, nothing is inserted, COMMIT releases the lock, and the events read are returned so
 * that the caller can decide again, knowing them.
 */
export async function appendIfHead(client: HeldClient, tables: PostgresTables, protocol: LockProtocol, afterSeq: number, events: readonly LedgerEvent[], remainingMs: number): Promise<IfHeadOutcome> {
  const last = events[events.length - 1] as LedgerEvent;
  const head = protocol === 'headRow' ? `UPDATE ${tables.head} SET seq = ${intLiteral(last.seq)}, hash = '${hexLiteral(last.hash)}' WHERE id AND seq = ${intLiteral(afterSeq)}; ` : '';
  const results = await client.queries(
    `${beginAndLock(tables, protocol, remainingMs)}; ${readAfterStatement(tables, afterSeq)}; ${insertBatchIfHeadStatement(tables.events, afterSeq, events)}; ${head}COMMIT`,
  );
  // The results: BEGIN, three SET LOCALs and the lock, then the read and the insert.
  const foreign = bodiesOf(results[statementsToLock]);
  const inserted = results[statementsToLock + 1]?.rowCount ?? 0;
  if (foreign.length === 0 && inserted === events.length) return { committed: true };
  // Under the lock, "nothing after afterSeq" and "every row inserted" go together; anything else is not our protocol.
  if (foreign.length === 0 || inserted !== 0) throw new LedgerError('store_failed', 'the conditional append found the log in an unexpected state');
  return { committed: false, foreign };
}

/**
 * Appends the batch (the head row too, for that protocol) and commits, in one round trip: the lock
 * is held until COMMIT returns (WAL flushed), so every round trip saved here shortens every other
 * writer's wait.
 */
export async function appendAndCommit(client: HeldClient, tables: PostgresTables, protocol: LockProtocol, events: readonly LedgerEvent[]): Promise<void> {
  if (events.length === 0) {
    await client.query('COMMIT');
    return;
  }
  const last = events[events.length - 1] as LedgerEvent;
  const head = protocol === 'headRow' ? `UPDATE ${tables.head} SET seq = ${intLiteral(last.seq)}, hash = '${hexLiteral(last.hash)}' WHERE id; ` : '';
  await client.queries(`${insertBatchStatement(tables.events, events)}; ${head}COMMIT`);
}

function hexLiteral(hash: string): string {
  if (!/^[0-9a-f]{64}$/.test(hash)) throw new TypeError('expected a SHA-256 hex digest');
  return hash;
}

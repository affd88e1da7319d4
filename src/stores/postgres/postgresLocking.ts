import type { LedgerEvent } from '../../domain/events';
import { eventOfBody } from '../shared/eventRows';
import { insertBatchStatement } from './postgresAppend';
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

/**
 * One round trip: BEGIN, bound every wait by what is left of the deadline, take the lock, and read
 * the events after `afterSeq`. Under READ COMMITTED each statement reads a fresh snapshot, so the
 * read that follows the lock sees every transaction that held the lock before (they have committed).
 */
export async function beginLocked(client: HeldClient, tables: PostgresTables, protocol: LockProtocol, afterSeq: number, remainingMs: number): Promise<LedgerEvent[]> {
  const ms = intLiteral(Math.max(1, Math.ceil(remainingMs)));
  const lock =
    protocol === 'advisory' ? `SELECT pg_advisory_xact_lock(${logLockSpace}, hashtext('${tables.schema}'))` : `SELECT seq FROM ${tables.head} WHERE id FOR UPDATE`;
  const results = await client.queries(
    `BEGIN ISOLATION LEVEL READ COMMITTED; SET LOCAL lock_timeout = ${ms}; SET LOCAL statement_timeout = ${ms}; ` +
      `SET LOCAL idle_in_transaction_session_timeout = ${ms}; ${lock}; SELECT body FROM ${tables.events} WHERE seq > ${intLiteral(afterSeq)} ORDER BY seq`,
  );
  const read = results[results.length - 1];
  return (read?.rows ?? []).map((row: { body: string }) => eventOfBody(row.body));
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

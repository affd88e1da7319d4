import type { LedgerEvent } from '../../domain/events';
import { LedgerError } from '../../errors';
import { rowOf, type EventRow } from '../shared/eventRows';
import { stringLiteral } from './postgresSql';

/** The batch's columns as arrays: one INSERT … SELECT FROM unnest(…) appends the whole batch. */
export function insertBatchQuery(eventsTable: string, events: readonly LedgerEvent[]): { readonly text: string; readonly values: unknown[][] } {
  const columns: unknown[][] = [[], [], [], [], [], [], [], [], [], [], []];
  for (const event of events) {
    const row = rowOf(event);
    const values = [row.seq, row.type, row.at, row.grant_id, row.tool, row.call_id, row.reason, row.input_bytes, row.hash, row.prev_hash, row.body];
    for (let i = 0; i < values.length; i++) (columns[i] as unknown[]).push(values[i]);
  }
  return {
    text: `INSERT INTO ${eventsTable} (seq, type, at, grant_id, tool, call_id, reason, input_bytes, hash, prev_hash, body)
      SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[], $9::text[], $10::text[], $11::text[])`,
    values: columns,
  };
}

/**
 * The same INSERT as one literal statement (no parameters), so that it can travel with COMMIT in a
 * single round trip while the log's lock is held. Strings are quoted as pg's `escapeLiteral` quotes them;
 * numbers are safe integers (the event shapes guarantee it; anything else is refused here).
 */
export function insertBatchStatement(eventsTable: string, events: readonly LedgerEvent[]): string {
  return insertRowsStatement(eventsTable, events.map(rowOf));
}

/** The same, from the batch's rows (when the caller needs them too). */
export function insertRowsStatement(eventsTable: string, rows: readonly EventRow[]): string {
  return `INSERT INTO ${eventsTable} (${columnList}) VALUES ${tuplesOf(rows)}`;
}

/**
 * The batch's rows, inserted only if the log's last event is the one at `afterSeq` with hash
 * `afterHash` (the log is empty when there is none): with the log's lock held, this is the
 * check-and-append of the one-round-trip transaction. The head is read as `max(seq)`, which
 * PostgreSQL answers from the primary key's last entry whatever its statistics say; `NOT EXISTS
 * (… WHERE seq > afterSeq)`, the form before, was planned as a scan of the whole table while the
 * table had no fresh statistics (a new log, or one growing faster than autovacuum analyzes it):
 * 8 ms at 30,000 events, under the lock, growing with the log (docs/postgres.md, Figures). The casts
 * fix the VALUES columns' types (a column that is NULL in every row would otherwise read as text).
 */
export function insertBatchIfHeadStatement(eventsTable: string, afterSeq: number, afterHash: string | undefined, rows: readonly EventRow[]): string {
  const headHeld = afterHash === undefined ? '' : ` AND (SELECT hash FROM ${eventsTable} WHERE seq = ${int(afterSeq)}) = ${stringLiteral(afterHash)}`;
  return (
    `INSERT INTO ${eventsTable} (${columnList}) SELECT seq::bigint, type::text, at::bigint, grant_id::text, tool::text, call_id::text, reason::text, ` +
    `input_bytes::bigint, hash::text, prev_hash::text, body::text FROM (VALUES ${tuplesOf(rows)}) AS batch (${columnList}) ` +
    `WHERE coalesce((SELECT max(seq) FROM ${eventsTable}), 0) = ${int(afterSeq)}${headHeld}`
  );
}

const columnList = 'seq, type, at, grant_id, tool, call_id, reason, input_bytes, hash, prev_hash, body';

function tuplesOf(rows: readonly EventRow[]): string {
  return rows
    .map((r) => {
      return `(${int(r.seq)}, ${stringLiteral(r.type)}, ${int(r.at)}, ${text(r.grant_id)}, ${text(r.tool)}, ${text(r.call_id)}, ${text(r.reason)}, ${r.input_bytes === null ? 'NULL' : int(r.input_bytes)}, ${stringLiteral(r.hash)}, ${stringLiteral(r.prev_hash)}, ${stringLiteral(r.body)})`;
    })
    .join(', ');
}

function int(value: number): string {
  if (!Number.isSafeInteger(value)) throw new LedgerError('store_failed', 'an event column is not a safe integer');
  return String(value);
}

function text(value: string | null): string {
  return value === null ? 'NULL' : stringLiteral(value);
}

/** Refuses a batch that does not continue `head` exactly (no gap, no fork), before sending it. */
export function checkContinues(head: { readonly seq: number; readonly hash: string }, events: readonly LedgerEvent[]): void {
  let previous = head;
  for (const event of events) {
    if (event.seq !== previous.seq + 1 || event.prevHash !== previous.hash) throw new LedgerError('store_failed', `append at seq ${event.seq} does not continue the stored log`);
    previous = event;
  }
}

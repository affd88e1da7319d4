import { escapeLiteral } from 'pg';
import type { LedgerEvent } from '../../domain/events';
import { LedgerError } from '../../errors';
import { rowOf } from '../shared/eventRows';

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
 * single round trip while the log's lock is held. Strings are quoted by pg's `escapeLiteral`;
 * numbers are safe integers (the event shapes guarantee it; anything else is refused here).
 */
export function insertBatchStatement(eventsTable: string, events: readonly LedgerEvent[]): string {
  const tuples = events.map((event) => {
    const r = rowOf(event);
    return `(${int(r.seq)}, ${escapeLiteral(r.type)}, ${int(r.at)}, ${text(r.grant_id)}, ${text(r.tool)}, ${text(r.call_id)}, ${text(r.reason)}, ${r.input_bytes === null ? 'NULL' : int(r.input_bytes)}, ${escapeLiteral(r.hash)}, ${escapeLiteral(r.prev_hash)}, ${escapeLiteral(r.body)})`;
  });
  return `INSERT INTO ${eventsTable} (seq, type, at, grant_id, tool, call_id, reason, input_bytes, hash, prev_hash, body) VALUES ${tuples.join(', ')}`;
}

function int(value: number): string {
  if (!Number.isSafeInteger(value)) throw new LedgerError('store_failed', 'an event column is not a safe integer');
  return String(value);
}

function text(value: string | null): string {
  return value === null ? 'NULL' : escapeLiteral(value);
}

/** Refuses a batch that does not continue `head` exactly (no gap, no fork), before sending it. */
export function checkContinues(head: { readonly seq: number; readonly hash: string }, events: readonly LedgerEvent[]): void {
  let previous = head;
  for (const event of events) {
    if (event.seq !== previous.seq + 1 || event.prevHash !== previous.hash) throw new LedgerError('store_failed', `append at seq ${event.seq} does not continue the stored log`);
    previous = event;
  }
}

import type { LedgerEvent } from '../../domain/events';
import { LedgerError } from '../../errors';
import { rowOf } from '../sqlite/sqliteRows';
import type { HeldClient } from './postgresPool';

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

/** Refuses a batch that does not continue `head` exactly (no gap, no fork), before sending it. */
export function checkContinues(head: { readonly seq: number; readonly hash: string }, events: readonly LedgerEvent[]): void {
  let previous = head;
  for (const event of events) {
    if (event.seq !== previous.seq + 1 || event.prevHash !== previous.hash) throw new LedgerError('store_failed', `append at seq ${event.seq} does not continue the stored log`);
    previous = event;
  }
}

export async function appendBatch(client: HeldClient, eventsTable: string, events: readonly LedgerEvent[]): Promise<void> {
  const { text, values } = insertBatchQuery(eventsTable, events);
  await client.query(text, values);
}

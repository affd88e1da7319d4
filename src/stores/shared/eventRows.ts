import { canonicalJson } from '../../domain/canonicalJson';
import { freezeJson } from '../../domain/freezeJson';
import type { LedgerEvent } from '../../domain/events';
import { LedgerError } from '../../errors';

/** One row of the `events` table: the canonical JSON body plus copies of fields for indexes and audits. */
export interface EventRow {
  readonly seq: number;
  readonly type: string;
  readonly at: number;
  readonly grant_id: string | null;
  readonly tool: string | null;
  readonly call_id: string | null;
  readonly reason: string | null;
  readonly input_bytes: number | null;
  readonly hash: string;
  readonly prev_hash: string;
  readonly body: string;
}

export const eventColumns = 'seq, type, at, grant_id, tool, call_id, reason, input_bytes, hash, prev_hash, body';

/** The row for an event: every column derives from the event, so `body` alone is the truth. */
export function rowOf(event: LedgerEvent): EventRow {
  const e = event as Partial<Record<'grantId' | 'tool' | 'callId' | 'reason', string>> & LedgerEvent;
  const inputBytes = event.type === 'call.admitted' ? event.reserved.inputBytes : event.type === 'call.rejected' ? event.inputBytes : undefined;
  return {
    seq: event.seq,
    type: event.type,
    at: event.at,
    grant_id: e.grantId ?? null,
    tool: e.tool ?? null,
    call_id: e.callId ?? null,
    reason: e.reason ?? null,
    input_bytes: inputBytes ?? null,
    hash: event.hash,
    prev_hash: event.prevHash,
    body: canonicalJson(event),
  };
}

/** Names the first column of a stored row that disagrees with its body, or undefined. */
export function columnMismatch(row: EventRow, event: LedgerEvent): string | undefined {
  const expected = rowOf(event);
  for (const column of ['seq', 'type', 'at', 'grant_id', 'tool', 'call_id', 'reason', 'input_bytes', 'hash', 'prev_hash'] as const) {
    if (row[column] !== expected[column]) return column;
  }
  return undefined;
}

/** Parses a stored body into a frozen event; a body that is not JSON of an object is `invalid_log`. */
export function eventOfBody(body: unknown): LedgerEvent {
  let event: unknown;
  try {
    event = typeof body === 'string' ? JSON.parse(body) : undefined;
  } catch {
    event = undefined;
  }
  if (event === null || typeof event !== 'object' || Array.isArray(event)) throw new LedgerError('invalid_log', 'a stored event body is not the JSON of an event');
  return freezeJson(event as LedgerEvent);
}

import { readFileSync } from 'node:fs';
import type { LedgerEvent } from '../domain/events';
import { freezeJson } from '../domain/freezeJson';
import { eventOfBody } from '../stores/shared/eventRows';
import { jsonLines } from '../verification/jsonLines';
import { eventShapeProblem } from '../verification/eventShape';
import { verify } from '../verification/verify';
import { isJsonLinesPath } from './commands/verifyJsonLines';
import { openLogTarget } from './logTarget';

/**
 * The events of a log as `atc verify` / `atc audit` name it: a SQLite file, a `postgres://` URL
 * (read through its in-memory copy) or a JSON Lines file (`.jsonl`, `.ndjson`). `types`, when
 * given, keeps only those types (a SQLite or PostgreSQL log then reads no other row).
 * Throws with a message naming the first malformed line or row.
 */
export async function readLogEvents(target: string, types?: readonly LedgerEvent['type'][]): Promise<LedgerEvent[]> {
  const keep = types === undefined ? undefined : new Set<string>(types);
  if (isJsonLinesPath(target)) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(target);
    } catch (error) {
      throw new Error(`cannot read ${target}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
    }
    const events: LedgerEvent[] = [];
    let line = 0;
    for (const value of jsonLines(bytes)) {
      line++;
      const problem = eventShapeProblem(value);
      if (problem !== undefined) throw new Error(`${target} line ${line} is not an event (${problem})`);
      const event = value as LedgerEvent;
      if (keep === undefined || keep.has(event.type)) events.push(freezeJson(event));
    }
    return events;
  }
  const log = await openLogTarget(target);
  try {
    const where = keep === undefined ? '' : ` WHERE type IN (${[...keep].map(() => '?').join(', ')})`;
    const bodies = log.db.prepare(`SELECT body FROM events${where} ORDER BY seq`).pluck().all(...(keep === undefined ? [] : [...keep])) as unknown[];
    return bodies.map((body) => {
      const event = eventOfBody(body);
      const problem = eventShapeProblem(event);
      if (problem !== undefined) throw new Error(`${target} holds a malformed event (${problem})`);
      return event;
    });
  } finally {
    await log.close();
  }
}

/** The whole log, refused unless it verifies: re-deciding a log that does not is meaningless. */
export async function readVerifiedLog(target: string): Promise<LedgerEvent[]> {
  const events = await readLogEvents(target);
  const result = verify(events, { problemsMax: 1 });
  const first = result.problems[0];
  if (first !== undefined) throw new Error(`${target} does not verify (seq ${first.seq} ${first.code}: ${first.message}); run atc verify`);
  return events;
}

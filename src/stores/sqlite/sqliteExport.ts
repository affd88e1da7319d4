import type Database from 'better-sqlite3';

/** Events read per query while exporting. */
export const exportPageEventsMax = 10_000;

/**
 * Writes the log as JSON Lines: each stored event's canonical JSON body, in seq order, up to the
 * head at the start (rows below it never change, so paging needs no long read transaction).
 */
export async function exportEvents(db: Database.Database, write: (chunk: string) => void | Promise<void>): Promise<{ readonly events: number; readonly headSeq: number }> {
  const headSeq = db.prepare('SELECT coalesce(max(seq), 0) FROM events').pluck().get() as number;
  const page = db.prepare(`SELECT seq, body FROM events WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ${exportPageEventsMax}`);
  let after = 0;
  let events = 0;
  for (;;) {
    const rows = page.all(after, headSeq) as { seq: number; body: string }[];
    if (rows.length === 0) break;
    await write(rows.map((r) => `${r.body}\n`).join(''));
    events += rows.length;
    after = (rows.at(-1) as { seq: number }).seq;
  }
  return { events, headSeq };
}

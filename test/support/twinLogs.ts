import { openLedger, sqliteStore } from '../../src';
import { manualClock } from './fixtures';
import { pgStore } from './pgLedger';
import { freshSchema, url } from './pgTest';

const hour = 3_600_000;

/** The same log in PostgreSQL and in a SQLite file, for CLI commands that must answer alike for both. */
export interface TwinLogs {
  /** A postgres:// URL naming the log's schema. */
  readonly pg: string;
  readonly file: string;
  readonly schema: string;
}

/**
 * Three `notes.write` calls on a grant of `calls` calls, a minute apart from `start`: admissions,
 * completions and, with fewer than three calls, a rejection. The PostgreSQL log is written by a
 * ledger; the SQLite file gets its events appended as they are.
 */
export async function twinLogs(options: { readonly prefix: string; readonly calls: number; readonly start: number; readonly file: (name: string) => string }): Promise<TwinLogs> {
  const clock = manualClock(options.start);
  const schema = freshSchema(options.prefix);
  const ledger = await openLedger({ clock: clock.now, store: pgStore(schema) });
  await ledger.registerTool({ name: 'notes.write', inputSchema: { type: 'object', properties: { p: { type: 'string' } } }, run: () => null });
  const a = await ledger.issue({ tools: ['notes.write'], expiresAt: clock.now() + hour, budget: { calls: options.calls, inputBytes: 1_000 } });
  for (const p of ['x', 'xy', 'xyz']) {
    await ledger.invoke(a.token, 'notes.write', { p });
    clock.advance(60_000);
  }
  const events = ledger.events();
  await ledger.close();
  const file = options.file(`${schema}.sqlite`);
  const sqlite = sqliteStore({ path: file });
  sqlite.append(events);
  sqlite.close();
  return { pg: `${url()}?schema=${schema}`, file, schema };
}

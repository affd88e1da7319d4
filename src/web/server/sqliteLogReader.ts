import type Database from 'better-sqlite3';
import { openLogFile } from '../../stores/sqlite/sqliteConnection';
import type { LogReader, StoredBody } from './logReader';

/**
 * Reads a SQLite log through a read-only connection (`openLogFile`: the file must exist, nothing is
 * migrated or written). In WAL mode each query sees the commits of other processes made before it.
 */
export function sqliteLogReader(path: string): LogReader {
  const db: Database.Database = openLogFile(path);
  const head = db.prepare('SELECT coalesce(max(seq), 0) FROM events').pluck();
  const page = db.prepare('SELECT seq, body FROM events WHERE seq > ? ORDER BY seq LIMIT ?');
  return {
    label: path,
    headSeq: async () => head.get() as number,
    bodiesAfter: async (after, limit) => page.all(after, limit) as StoredBody[],
    close: async () => void db.close(),
  };
}

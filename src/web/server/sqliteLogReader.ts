import { statSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { openLogFile } from '../../stores/sqlite/sqliteConnection';
import { storedBodyBytesMax, type LogReader, type StoredBody } from './logReader';

interface Connection {
  readonly db: Database.Database;
  readonly head: Database.Statement;
  readonly page: Database.Statement;
  /** What the path named when it was opened (see `identityOf`). */
  readonly identity: string;
}

/**
 * Which file the path names: its device and inode; for a private in-memory copy (`openLogFile` on a
 * read-only directory) also its size and times, since the copy never sees later changes. ctime
 * cannot be set back by a user, so a write to the file always changes it.
 */
function identityOf(path: string, copy: boolean): string {
  const stat = statSync(path, { bigint: true });
  const file = `${stat.dev}:${stat.ino}`;
  return copy ? `${file}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}` : file;
}

function connect(path: string): Connection {
  const db = openLogFile(path);
  try {
    return {
      db,
      head: db.prepare('SELECT coalesce(max(seq), 0) FROM events').pluck(),
      // octet_length reads a text's size from its record header, so a withheld body is never read.
      page: db.prepare('SELECT seq, CASE WHEN octet_length(body) <= ? THEN body END AS body FROM events WHERE seq > ? ORDER BY seq LIMIT ?'),
      identity: identityOf(path, db.memory),
    };
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * Reads a SQLite log through a read-only connection (`openLogFile`: the file must exist, nothing is
 * migrated or written). In WAL mode each query sees the commits of other processes made before it.
 *
 * Every read answers from the file as it is on disk now. SQLite keeps the pages a connection read
 * and trusts them until its own change counter or WAL index says another connection wrote; a byte
 * edited outside SQLite changes neither, so a long-lived connection kept serving the page the audit
 * view had verified, reload or not (issue 30). So each read first drops the connection's page cache
 * (`PRAGMA shrink_memory` frees every unpinned page, and between reads none is pinned), and the file
 * is opened again when the path names another one (replaced), or, for an in-memory copy, when the
 * file changed.
 */
export function sqliteLogReader(path: string): LogReader {
  let connection: Connection | undefined = connect(path);
  const current = (): Connection => {
    if (connection === undefined || identityOf(path, connection.db.memory) !== connection.identity) {
      connection?.db.close();
      connection = undefined; // a failed open below fails this read and is tried again by the next
      connection = connect(path);
    }
    connection.db.pragma('shrink_memory');
    return connection;
  };
  return {
    label: path,
    headSeq: async () => current().head.get() as number,
    bodiesAfter: async (after, limit) => {
      const rows = current().page.all(storedBodyBytesMax, after, limit) as { seq: number; body: unknown }[];
      return rows.map((row): StoredBody => ({ seq: row.seq, body: typeof row.body === 'string' ? row.body : undefined }));
    },
    close: async () => void connection?.db.close(),
  };
}

import type Database from 'better-sqlite3';
import type { SqliteVerifyIo } from '../stores/sqlite/sqliteVerify';
import { verifyOpenLog } from '../stores/sqlite/sqliteVerify';
import { parsePostgresTarget } from '../stores/postgres/postgresTarget';
import { PostgresMirror } from './postgresMirror';

/**
 * The CLI's way into a PostgreSQL log: an in-memory SQLite copy (postgresMirror.ts) that the SQLite
 * commands read as they read a file. Loaded only when a command is given a postgres:// URL.
 */
export async function openPostgresLog(url: string): Promise<{ readonly db: Database.Database; readonly display: string; sync(): Promise<number>; close(): Promise<void> }> {
  const target = parsePostgresTarget(url);
  const mirror = await PostgresMirror.open(target);
  return { db: mirror.db, display: target.display, sync: () => mirror.sync(), close: () => mirror.close() };
}

/** `atc verify postgres://…`: the same checks and output as for a SQLite file; exit 0, 1, or 2. */
export async function verifyPostgresUrl(url: string, io: SqliteVerifyIo): Promise<number> {
  let mirror: PostgresMirror;
  let display: string;
  try {
    const target = parsePostgresTarget(url);
    display = target.display;
    mirror = await PostgresMirror.open(target);
  } catch (error) {
    io.err(`atc verify: ${(error as Error).message}`);
    return 2;
  }
  try {
    return verifyOpenLog(mirror.db, display, io, await mirror.schemaProblems());
  } catch (error) {
    io.err(`atc verify: ${(error as Error).message}`);
    return 2;
  } finally {
    await mirror.close();
  }
}

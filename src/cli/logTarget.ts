import type Database from 'better-sqlite3';
import { openLogFile } from '../stores/sqlite/sqliteConnection';
import type { CliIo } from './io';

/** An open log for the read-only commands: a SQLite file, or a PostgreSQL log's in-memory copy. */
export interface OpenLog {
  readonly db: Database.Database;
  /** Copies what was appended since (PostgreSQL); a SQLite file is read live, so 0. */
  sync(): Promise<number>;
  close(): Promise<void>;
}

export function isPostgresTarget(target: string): boolean {
  return /^postgres(ql)?:\/\//i.test(target);
}

/** Opens `target` read-only; `pg` is loaded only for a postgres:// URL. */
export async function openLogTarget(target: string): Promise<OpenLog> {
  if (isPostgresTarget(target)) return (await import('./postgresLog')).openPostgresLog(target);
  const db = openLogFile(target);
  return { db, sync: () => Promise.resolve(0), close: async () => void db.close() };
}

/** `openLogTarget` for a command: a log that cannot be opened is said on stderr (`atc <command>: …`) and is exit 2. */
export async function openLogOrExit(target: string, command: string, io: CliIo): Promise<OpenLog | 2> {
  try {
    return await openLogTarget(target);
  } catch (error) {
    io.err(`atc ${command}: ${(error as Error).message}`);
    return 2;
  }
}

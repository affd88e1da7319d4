import { accessSync, constants, existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { LedgerError } from '../../errors';
import { readMigrations } from '../shared/migrationFiles';
import { defaultMigrationsDir, migrate } from './sqliteMigrations';
import { defaultReadonlyCopyMaxBytes, isCannotOpenInPlace, openReadonlyCopy } from './sqliteReadonlyCopy';

import type { SqliteSynchronous } from './sqliteStoreOptions';

export type { SqliteSynchronous };

export interface SqliteConnectionOptions {
  readonly path: string;
  /** Open read-only: reads work, every append throws (so admissions fail closed). */
  readonly readonly?: boolean;
  /** Fail instead of creating a missing file (the CLI). */
  readonly fileMustExist?: boolean;
  /** How long one statement waits for another writer's lock before SQLITE_BUSY. */
  readonly busyTimeoutMs: number;
  readonly synchronous: SqliteSynchronous;
  readonly migrationsDir?: string;
  /** Read-only and not openable in place (a read-only directory): the largest file copied into memory. */
  readonly readonlyCopyMaxBytes?: number;
}

const synchronousLevel: { readonly [K in SqliteSynchronous]: number } = { FULL: 2, EXTRA: 3 };

function isWritable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Opens the file where it is. Read-only, SQLite opens lazily: the first read is what fails on a
 * read-only directory (it cannot create the WAL's `-shm`), so it is made here.
 */
function openInPlace(options: SqliteConnectionOptions): Database.Database {
  const readonly = options.readonly === true;
  const db = new Database(options.path, { readonly, fileMustExist: options.fileMustExist === true, timeout: options.busyTimeoutMs });
  if (readonly && !isMemoryPath(options.path)) {
    try {
      db.prepare('SELECT count(*) FROM sqlite_master').get();
    } catch (error) {
      db.close();
      throw error;
    }
  }
  return db;
}

export function isMemoryPath(path: string): boolean {
  return path === ':memory:' || path === '' || path.startsWith('file::memory:');
}

/**
 * Opens a connection the way every part of the SQLite store needs it: WAL (so readers never block the
 * writer), `synchronous` set and read back (better-sqlite3 builds SQLite so that WAL mode may default
 * to NORMAL, which can lose the last commits on power loss), a bounded busy timeout, and the schema
 * migrated (or, read-only, checked).
 */
export function openConnection(options: SqliteConnectionOptions): { readonly db: Database.Database; readonly readonly: boolean } {
  let db: Database.Database;
  try {
    db = openInPlace(options);
  } catch (cause) {
    if (options.readonly !== true || isMemoryPath(options.path) || !isCannotOpenInPlace(cause) || !existsSync(options.path)) {
      throw new LedgerError('store_failed', `cannot open the SQLite log ${options.path}: ${(cause as Error).message}`, { cause });
    }
    try {
      db = openReadonlyCopy(options.path, options.readonlyCopyMaxBytes ?? defaultReadonlyCopyMaxBytes, options.busyTimeoutMs);
    } catch (error) {
      if (error instanceof LedgerError) throw error;
      throw new LedgerError('store_failed', `cannot read the SQLite log ${options.path} into memory: ${(error as Error).message}`, { cause: error });
    }
  }
  try {
    // better-sqlite3 reports the flag it was given; SQLite silently opens a read-only file read-only.
    const readonly = db.readonly || (!isMemoryPath(options.path) && !isWritable(options.path));
    if (!readonly && !isMemoryPath(options.path)) {
      const mode = db.pragma('journal_mode = WAL', { simple: true });
      if (mode !== 'wal') throw new LedgerError('store_failed', `SQLite refused WAL mode (journal_mode is ${String(mode)})`);
    }
    db.pragma(`synchronous = ${options.synchronous}`);
    const level = db.pragma('synchronous', { simple: true });
    if (level !== synchronousLevel[options.synchronous]) {
      throw new LedgerError('store_failed', `SQLite did not take synchronous=${options.synchronous} (reads back ${String(level)}): refusing to acknowledge commits that may not be durable`);
    }
    migrate(db, readMigrations(options.migrationsDir ?? defaultMigrationsDir()), readonly);
    return { db, readonly };
  } catch (error) {
    db.close();
    if (error instanceof LedgerError) throw error;
    throw new LedgerError('store_failed', `cannot prepare the SQLite log ${options.path}: ${(error as Error).message}`, { cause: error });
  }
}

/** A read-only connection to an existing log file, for the CLI (audit, export, verify). */
export function openLogFile(path: string, migrationsDir?: string): Database.Database {
  return openConnection({ path, readonly: true, fileMustExist: true, busyTimeoutMs: 5_000, synchronous: 'FULL', ...(migrationsDir !== undefined ? { migrationsDir } : {}) }).db;
}

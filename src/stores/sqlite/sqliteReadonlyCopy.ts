import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { LedgerError } from '../../errors';

/** The largest log file read into memory when it cannot be opened in place (256 MiB). */
export const defaultReadonlyCopyMaxBytes = 256 * 1024 * 1024;

/**
 * Whether an open for reading failed because SQLite could not create or map what a read needs next to
 * the file (the `-shm` of a WAL log, a journal) — what a read-only directory or filesystem does.
 */
export function isCannotOpenInPlace(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_CANTOPEN') || code.startsWith('SQLITE_READONLY'));
}

function walBytes(path: string): number {
  try {
    return statSync(`${path}-wal`).size;
  } catch {
    return 0;
  }
}

function readBounded(path: string, maxBytes: number): Buffer {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size > maxBytes) {
      throw new LedgerError('store_failed', `the SQLite log ${path} cannot be opened in place (read-only directory?) and is ${size} bytes, over the ${maxBytes}-byte limit for a private in-memory copy (readonlyCopyMaxBytes)`);
    }
    const bytes = Buffer.alloc(size);
    let done = 0;
    while (done < size) {
      const n = readSync(fd, bytes, done, size - done, done);
      if (n === 0) break;
      done += n;
    }
    return bytes.subarray(0, done);
  } finally {
    closeSync(fd);
  }
}

/**
 * Opens a private, read-only, in-memory copy of a log file that SQLite cannot open in place (a
 * read-only directory or medium). Refused when a non-empty `-wal` lies next to it: its commits are not
 * in the main file yet and cannot be checkpointed without writing, so the copy would be silently stale.
 */
export function openReadonlyCopy(path: string, maxBytes: number, timeout: number): Database.Database {
  if (walBytes(path) > 0) {
    throw new LedgerError('store_failed', `the SQLite log ${path} cannot be opened in place (read-only directory?) and has a non-empty ${path}-wal whose commits cannot be applied without writing: copy the file and its -wal to a writable directory, or checkpoint it where it was written`);
  }
  const bytes = readBounded(path, maxBytes);
  // Bytes 18 and 19 mark a WAL database; an in-memory copy has no WAL, so mark it rollback-journal.
  if (bytes.length >= 20 && bytes[18] === 2 && bytes[19] === 2) {
    bytes[18] = 1;
    bytes[19] = 1;
  }
  return new Database(bytes, { readonly: true, timeout });
}

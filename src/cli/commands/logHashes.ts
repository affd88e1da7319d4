import { readFileSync } from 'node:fs';
import { genesisHash } from '../../domain/events';
import { openLogFile } from '../../stores/sqlite/sqliteConnection';
import { jsonLines } from '../../verification/jsonLines';
import { isJsonLinesPath } from './verifyJsonLines';

/** A CLI failure with its exit code: 2 the input cannot be read, 1 it is wrong. */
export class CliFailure extends Error {
  constructor(
    readonly exitCode: 1 | 2,
    message: string,
  ) {
    super(message);
  }
}

const hashPattern = /^[0-9a-f]{64}$/;

/**
 * The event hashes of a log (SQLite file or JSON Lines), in order, streamed, checking sequence and
 * chain links as it goes (not the hashes themselves: `atc verify` recomputes those). Throws
 * CliFailure(2) for a file it cannot read as a log, CliFailure(1) for a broken sequence or chain.
 */
export function* logHashes(path: string): Generator<string> {
  let prev = genesisHash;
  let seq = 0;
  const next = (eventSeq: unknown, hash: unknown, prevHash: unknown): string => {
    seq++;
    if (eventSeq !== seq) throw new CliFailure(1, `the log is out of sequence at seq ${seq}`);
    if (typeof hash !== 'string' || !hashPattern.test(hash)) throw new CliFailure(1, `the event at seq ${seq} has no valid hash`);
    if (prevHash !== prev) throw new CliFailure(1, `the log's hash chain breaks at seq ${seq}`);
    prev = hash;
    return hash;
  };
  if (/\.(sqlite|db)$/i.test(path)) {
    let db;
    try {
      db = openLogFile(path);
    } catch (error) {
      throw new CliFailure(2, (error as Error).message);
    }
    try {
      for (const row of db.prepare('SELECT seq, hash, prev_hash FROM events ORDER BY seq').iterate() as IterableIterator<{ seq: number; hash: string; prev_hash: string }>) {
        yield next(row.seq, row.hash, row.prev_hash);
      }
    } finally {
      db.close();
    }
    return;
  }
  if (!isJsonLinesPath(path)) throw new CliFailure(2, `${path}: a log is a .sqlite/.db file or a .jsonl/.ndjson file`);
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw new CliFailure(2, `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  for (const value of jsonLines(bytes)) {
    const event = value !== null && typeof value === 'object' ? (value as { seq?: unknown; hash?: unknown; prevHash?: unknown }) : {};
    yield next(event.seq, event.hash, event.prevHash);
  }
}

/** The text of a file, or CliFailure(2). */
export function readText(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new CliFailure(2, `cannot read ${what} ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
}

/** A key given inline or as `@file`. */
export function keyArgument(value: string, what: string): string {
  return value.startsWith('@') ? readText(value.slice(1), what).trim() : value.trim();
}

import type Database from 'better-sqlite3';
import { readFileSync } from 'node:fs';
import { genesisHash } from '../../domain/events';
import { isPostgresTarget, openLogTarget, type OpenLog } from '../logTarget';
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

/** Runs a command's work; a `CliFailure` it throws is said on stderr (`atc <command>: …`) and is its exit code. */
export async function exitOnFailure(command: string, io: { err(line: string): void }, work: () => Promise<number>): Promise<number> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof CliFailure)) throw error;
    io.err(`atc ${command}: ${error.message}`);
    return error.exitCode;
  }
}

const hashPattern = /^[0-9a-f]{64}$/;

/**
 * Checks sequence and chain links of a log's (seq, hash, prevHash) rows as they stream by (not the
 * hashes themselves: `atc verify` recomputes those); yields each hash. CliFailure(1) when broken.
 */
function* checkedHashes(rows: Iterable<{ readonly seq: unknown; readonly hash: unknown; readonly prevHash: unknown }>): Generator<string> {
  let prev = genesisHash;
  let seq = 0;
  for (const row of rows) {
    seq++;
    if (row.seq !== seq) throw new CliFailure(1, `the log is out of sequence at seq ${seq}`);
    if (typeof row.hash !== 'string' || !hashPattern.test(row.hash)) throw new CliFailure(1, `the event at seq ${seq} has no valid hash`);
    if (row.prevHash !== prev) throw new CliFailure(1, `the log's hash chain breaks at seq ${seq}`);
    prev = row.hash;
    yield row.hash;
  }
}

function* databaseRows(db: Database.Database): Generator<{ seq: unknown; hash: unknown; prevHash: unknown }> {
  for (const row of db.prepare('SELECT seq, hash, prev_hash FROM events ORDER BY seq').iterate() as IterableIterator<{ seq: number; hash: string; prev_hash: string }>) {
    yield { seq: row.seq, hash: row.hash, prevHash: row.prev_hash };
  }
}

function* jsonLinesRows(path: string): Generator<{ seq: unknown; hash: unknown; prevHash: unknown }> {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw new CliFailure(2, `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  for (const value of jsonLines(bytes)) {
    const event = value !== null && typeof value === 'object' ? (value as { seq?: unknown; hash?: unknown; prevHash?: unknown }) : {};
    yield { seq: event.seq, hash: event.hash, prevHash: event.prevHash };
  }
}

/**
 * Runs `use` over the event hashes of a log, in order, streamed and checked as checkedHashes does:
 * a SQLite file, a JSON Lines file, or a postgres:// URL (read through the CLI's in-memory copy of
 * the PostgreSQL log, src/cli/logTarget.ts; `pg` is loaded only then). CliFailure(2) for a log it
 * cannot read.
 */
export async function withLogHashes<T>(path: string, use: (hashes: Iterable<string>) => T): Promise<T> {
  if (!isSqlitePath(path) && !isPostgresTarget(path)) {
    if (!isJsonLinesPath(path)) throw new CliFailure(2, `${path}: a log is a .sqlite/.db file, a .jsonl/.ndjson file or a postgres:// URL`);
    return use(checkedHashes(jsonLinesRows(path)));
  }
  let log: OpenLog;
  try {
    log = await openLogTarget(path);
  } catch (error) {
    throw new CliFailure(2, (error as Error).message);
  }
  try {
    return use(checkedHashes(databaseRows(log.db)));
  } finally {
    await log.close();
  }
}

function isSqlitePath(path: string): boolean {
  return /\.(sqlite|db)$/i.test(path);
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

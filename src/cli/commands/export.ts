import { closeSync, fsyncSync, lstatSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import type { CliCommand } from '../command';
import { processIo, type CliIo } from '../io';
import { parseOrExit, type CommandSpec } from '../options';
import { openLogOrExit } from '../logTarget';
import { exportEvents } from '../../stores/sqlite/sqliteExport';

export const exportSpec: CommandSpec = {
  name: 'export',
  summary: 'write a SQLite or PostgreSQL log as JSON Lines (--output log.jsonl)',
  usage: ['<log.sqlite | postgres://…[?schema=atc]> [--output log.jsonl]'],
  description: 'One canonical event per line, for `atc verify log.jsonl`, `verify()` and other tools.',
  operands: { name: '<log>', min: 1, max: 1 },
  options: [{ name: 'output', value: '<file.jsonl>', description: 'write there (beside it first, renamed into place when complete); default or "-": stdout' }],
};

/**
 * `atc export`: the stored log as JSON Lines (one canonical event per line), for `verify()` and other
 * tools. A file output is written beside its target and renamed into place when complete.
 */
export async function runExport(args: readonly string[], io: CliIo = processIo): Promise<number> {
  const parsed = await parseOrExit(exportSpec, args, io);
  if (typeof parsed === 'number') return parsed;
  const log = await openLogOrExit(parsed.positional[0] as string, 'export', io);
  if (log === 2) return 2;
  const db = log.db;
  const output = parsed.values.get('output');
  const refused = output === undefined || output === '-' ? undefined : nonRegularOutput(output);
  if (refused !== undefined) {
    db.close();
    io.err(`atc export: refusing to replace ${output}: it is ${refused}, not a regular file`);
    return 2;
  }
  try {
    if (output === undefined || output === '-') {
      await exportEvents(db, (chunk) => io.out(chunk.slice(0, -1)));
      return 0;
    }
    const partial = `${output}.partial`;
    const fd = openSync(partial, 'w');
    try {
      const result = await exportEvents(db, (chunk) => void writeSync(fd, chunk));
      fsyncSync(fd);
      closeSync(fd);
      renameSync(partial, output);
      io.err(`exported ${result.events} events (head seq ${result.headSeq}) to ${output}`);
      return 0;
    } catch (error) {
      try {
        closeSync(fd);
      } catch {
        // already closed
      }
      rmSync(partial, { force: true });
      io.err(`atc export: cannot write ${output}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
      return 1;
    }
  } finally {
    await log.close();
  }
}

/** What `path` is when it exists and is not a regular file (renaming over it would replace a FIFO, a device or a symlink), else undefined. */
function nonRegularOutput(path: string): string | undefined {
  let stat;
  try {
    stat = lstatSync(path);
  } catch {
    return undefined; // absent (or unreadable: the write reports it)
  }
  if (stat.isFile()) return undefined;
  if (stat.isSymbolicLink()) return 'a symbolic link';
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'a device';
  if (stat.isDirectory()) return 'a directory';
  return 'a special file';
}

export const exportCommand: CliCommand = {
  summary: exportSpec.summary,
  spec: exportSpec,
  run: (args) => runExport(args),
};

import { readFileSync } from 'node:fs';
import type { CliCommand } from '../command';
import { processIo, type CliIo } from '../io';
import { parseOrExit, usageError, vkeyOption, type CommandSpec } from '../options';
import { startAuditServer, type AuditServer, type CheckpointFiles } from '../../web/server/auditServer';
import type { LogReader } from '../../web/server/logReader';
import { isLoopbackHost } from '../../web/server/loopback';
import { sqliteLogReader } from '../../web/server/sqliteLogReader';

export const serveSpec: CommandSpec = {
  name: 'serve',
  summary: 'serve a read-only audit page of a log (http://127.0.0.1 by default)',
  usage: ['<log.sqlite | postgres://…> [--port N] [--host 127.0.0.1] [--allow-remote] [--schema atc] [--checkpoint <file> --vkey <key|@file>]'],
  description: 'The page re-checks the log in the browser (docs/audit.md). Runs until Ctrl-C.',
  operands: { name: '<log>', min: 1, max: 1 },
  options: [
    { name: 'port', value: 'N', description: 'the port to listen on (default 0: any free port, printed at start)' },
    { name: 'host', value: '<address>', description: 'the address to listen on (default 127.0.0.1)' },
    { name: 'allow-remote', description: 'allow a --host that is not a loopback address (serves the log to other machines)' },
    { name: 'schema', value: '<name>', description: 'for a postgres:// log: its schema (default atc)' },
    { name: 'checkpoint', value: '<file>', description: 'a signed checkpoint the page checks the log against (with --vkey)' },
    vkeyOption,
  ],
};

/** A checkpoint or key file is small; anything bigger is not one. */
const checkpointFileBytesMax = 65_536;

/**
 * `atc serve`: the read-only audit page of a log. Resolves with the running server (the process
 * stays up until SIGINT/SIGTERM), or with an exit code when it cannot start.
 */
export async function startServe(args: readonly string[], io: CliIo = processIo): Promise<AuditServer | number> {
  const parsed = await parseOrExit(serveSpec, args, io);
  if (typeof parsed === 'number') return parsed;
  const port = Number(parsed.values.get('port') ?? '0');
  if (!Number.isSafeInteger(port) || port < 0 || port > 65_535) return usageError(serveSpec, io, '--port needs an integer from 0 to 65535');
  const host = parsed.values.get('host') ?? '127.0.0.1';
  const allowRemote = parsed.flags.has('allow-remote');
  if (!isLoopbackHost(host) && !allowRemote) return usageError(serveSpec, io, `--host ${host} is not a loopback address; add --allow-remote to serve the log to other machines`);
  const checkpoint = readCheckpoint(parsed.values.get('checkpoint'), parsed.values.get('vkey'), io);
  if (typeof checkpoint === 'number') return checkpoint;

  const log = parsed.positional[0] as string;
  const isPostgres = /^postgres(ql)?:\/\//i.test(log);
  if (!isPostgres && parsed.values.has('schema')) return usageError(serveSpec, io, '--schema is for a postgres:// log');
  let reader: LogReader;
  try {
    // pg is loaded only for a PostgreSQL log, so the other commands never load it.
    reader = isPostgres ? await (await import('../../web/server/postgresLogReader')).postgresLogReader(log, parsed.values.get('schema') ?? 'atc') : sqliteLogReader(log);
  } catch (error) {
    io.err(`atc serve: ${(error as Error).message}`);
    return 2;
  }
  let server: AuditServer;
  try {
    server = await startAuditServer({ reader, host, port, allowRemote, ...(checkpoint !== undefined ? { checkpoint } : {}) });
  } catch (error) {
    await reader.close();
    io.err(`atc serve: ${(error as Error).message}`);
    return 2;
  }
  if (!isLoopbackHost(host)) io.err(`atc serve: WARNING: serving on ${host}, which is not loopback: anyone who can reach this port can read the whole log (grants, tools, decisions); there is no authentication and no TLS`);
  await io.out(`listening on ${server.url}`);
  return {
    ...server,
    close: async () => {
      await server.close();
      await reader.close();
    },
  };
}

function readCheckpoint(file: string | undefined, vkey: string | undefined, io: CliIo): CheckpointFiles | number | undefined {
  if (file === undefined && vkey === undefined) return undefined;
  if (file === undefined || vkey === undefined) return usageError(serveSpec, io, '--checkpoint and --vkey go together');
  try {
    const note = readSmall(file);
    const verifierKey = (vkey.startsWith('@') ? readSmall(vkey.slice(1)) : vkey).trim();
    return { note, verifierKey };
  } catch (error) {
    io.err(`atc serve: ${(error as Error).message}`);
    return 2;
  }
}

function readSmall(file: string): string {
  const text = readFileSync(file, 'utf8');
  if (text.length > checkpointFileBytesMax) throw new Error(`${file} is too large for a checkpoint or key`);
  return text;
}

export const serveCommand: CliCommand = {
  summary: serveSpec.summary,
  spec: serveSpec,
  run: async (args) => {
    const started = await startServe(args);
    if (typeof started === 'number') return started;
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await started.close();
    return 0;
  },
};

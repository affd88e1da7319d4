import type { CliCommand } from '../command';
import { parseOptions, sqliteProcessIo, type SqliteCliIo } from '../../stores/sqlite/sqliteCliIo';
import { formatCheckpointBody, merkleHasher, nodeCrypto, parseSignerKey, rootOfEventHashes, signNote } from '../../transparency';
import { CliFailure, readText, withLogHashes } from './logHashes';

const usage = 'usage: atc checkpoint <log.sqlite | log.jsonl | postgres://…[?schema=atc]> --key <file.key>';

/**
 * `atc checkpoint`: a signed C2SP checkpoint of the log's head (origin = the key's name). It checks
 * sequence and chain links, not every hash: run `atc verify` before signing a log you did not write.
 */
export async function runCheckpoint(args: readonly string[], io: SqliteCliIo = sqliteProcessIo): Promise<number> {
  const parsed = parseOptions(args, ['key'], ['help']);
  if ('error' in parsed || parsed.flags.has('help') || parsed.positional.length !== 1 || !parsed.values.has('key')) {
    if ('error' in parsed) io.err(`atc checkpoint: ${parsed.error}`);
    io.err(usage);
    return 'error' in parsed || !parsed.flags.has('help') ? 2 : 0;
  }
  try {
    const key = parseSignerKey(nodeCrypto, readText(parsed.values.get('key') as string, 'key file'));
    if (!key.ok) throw new CliFailure(2, `the key file: ${key.message}`);
    const { size, root } = await withLogHashes(parsed.positional[0] as string, (hashes) => rootOfEventHashes(merkleHasher(nodeCrypto), hashes));
    await io.out(signNote(nodeCrypto, key.key, formatCheckpointBody({ origin: key.key.name, size, root })).slice(0, -1));
    return 0;
  } catch (error) {
    if (!(error instanceof CliFailure)) throw error;
    io.err(`atc checkpoint: ${error.message}`);
    return error.exitCode;
  }
}

export const checkpointCommand: CliCommand = {
  summary: "print a signed checkpoint (C2SP) of a log's head (--key <file.key>)",
  run: (args) => runCheckpoint(args),
};

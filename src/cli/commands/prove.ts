import type { CliCommand } from '../command';
import { parseOptions, sqliteProcessIo, type SqliteCliIo } from '../../stores/sqlite/sqliteCliIo';
import { nodeCrypto, proveEvent } from '../../transparency';
import { parseDecimal } from '../../transparency/bytes';
import { CliFailure, readText, withLogHashes } from './logHashes';

const usage = 'usage: atc prove <log.sqlite | log.jsonl | postgres://…[?schema=atc]> --seq N --checkpoint <file>';

/**
 * `atc prove`: a C2SP tlog-proof that event N is in the checkpoint's tree, carrying the event hash
 * (extra line) and the checkpoint, so `atc verify-proof` needs only the verifier key. Exit 2 for an
 * out-of-range seq or a checkpoint larger than the log, 1 when the checkpoint is not of this log.
 */
export async function runProve(args: readonly string[], io: SqliteCliIo = sqliteProcessIo): Promise<number> {
  const parsed = parseOptions(args, ['seq', 'checkpoint'], ['help']);
  if ('error' in parsed || parsed.flags.has('help') || parsed.positional.length !== 1 || !parsed.values.has('seq') || !parsed.values.has('checkpoint')) {
    if ('error' in parsed) io.err(`atc prove: ${parsed.error}`);
    io.err(usage);
    return 'error' in parsed || !parsed.flags.has('help') ? 2 : 0;
  }
  const seq = parseDecimal(parsed.values.get('seq') as string);
  if (seq === undefined || seq < 1) {
    io.err('atc prove: --seq must be a positive integer');
    return 2;
  }
  try {
    const checkpoint = readText(parsed.values.get('checkpoint') as string, 'checkpoint');
    const result = await withLogHashes(parsed.positional[0] as string, (hashes) => proveEvent(nodeCrypto, hashes, seq, checkpoint));
    if (!result.ok) throw new CliFailure(result.code === 'checkpoint_mismatch' ? 1 : 2, result.message);
    await io.out(result.proof.slice(0, -1));
    return 0;
  } catch (error) {
    if (!(error instanceof CliFailure)) throw error;
    io.err(`atc prove: ${error.message}`);
    return error.exitCode;
  }
}

export const proveCommand: CliCommand = {
  summary: 'print a C2SP tlog-proof that event --seq N is in a checkpoint (--checkpoint <file>)',
  run: (args) => runProve(args),
};

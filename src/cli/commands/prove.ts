import type { CliCommand } from '../command';
import { processIo, type CliIo } from '../io';
import { parseOrExit, type CommandSpec } from '../options';
import { nodeCrypto, proveEvent } from '../../transparency';
import { parseDecimal } from '../../transparency/bytes';
import { CliFailure, exitOnFailure, readText, withLogHashes } from './logHashes';

export const proveSpec: CommandSpec = {
  name: 'prove',
  summary: 'print a C2SP tlog-proof that event --seq N is in a checkpoint (--checkpoint <file>)',
  usage: ['<log.sqlite | log.jsonl | postgres://…[?schema=atc]> --seq N --checkpoint <file>'],
  description: 'The proof carries the event hash and the checkpoint, so `atc verify-proof` needs only the verifier key. Exit 2 for an out-of-range seq or a checkpoint larger than the log, 1 when the checkpoint is not of this log.',
  operands: { name: '<log>', min: 1, max: 1 },
  options: [
    { name: 'seq', value: 'N', required: true, description: 'the event to prove (its seq, from 1)' },
    { name: 'checkpoint', value: '<file>', required: true, description: 'a checkpoint of this log (from `atc checkpoint`)' },
  ],
};

/**
 * `atc prove`: a C2SP tlog-proof that event N is in the checkpoint's tree, carrying the event hash
 * (extra line) and the checkpoint, so `atc verify-proof` needs only the verifier key. Exit 2 for an
 * out-of-range seq or a checkpoint larger than the log, 1 when the checkpoint is not of this log.
 */
export async function runProve(args: readonly string[], io: CliIo = processIo): Promise<number> {
  const parsed = await parseOrExit(proveSpec, args, io);
  if (typeof parsed === 'number') return parsed;
  const seq = parseDecimal(parsed.values.get('seq') as string);
  if (seq === undefined || seq < 1) {
    io.err('atc prove: --seq must be a positive integer');
    return 2;
  }
  return exitOnFailure('prove', io, async () => {
    const checkpoint = readText(parsed.values.get('checkpoint') as string, 'checkpoint');
    const result = await withLogHashes(parsed.positional[0] as string, (hashes) => proveEvent(nodeCrypto, hashes, seq, checkpoint));
    if (!result.ok) throw new CliFailure(result.code === 'checkpoint_mismatch' ? 1 : 2, result.message);
    await io.out(result.proof.slice(0, -1));
    return 0;
  });
}

export const proveCommand: CliCommand = {
  summary: proveSpec.summary,
  spec: proveSpec,
  run: (args) => runProve(args),
};

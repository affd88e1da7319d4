import type { CliCommand } from '../command';
import { processIo, type CliIo } from '../io';
import { parseOrExit, type CommandSpec } from '../options';
import { formatCheckpointBody, merkleHasher, nodeCrypto, parseSignerKey, rootOfEventHashes, signNote } from '../../transparency';
import { CliFailure, exitOnFailure, readText, withLogHashes } from './logHashes';

export const checkpointSpec: CommandSpec = {
  name: 'checkpoint',
  summary: "print a signed checkpoint (C2SP) of a log's head (--key <file.key>)",
  usage: ['<log.sqlite | log.jsonl | postgres://…[?schema=atc]> --key <file.key>'],
  description: 'The origin is the key\'s name. It checks sequence and chain links, not every hash: run `atc verify` before signing a log you did not write.',
  operands: { name: '<log>', min: 1, max: 1 },
  options: [{ name: 'key', value: '<file.key>', required: true, description: 'the signing key file written by `atc keygen`' }],
};

/**
 * `atc checkpoint`: a signed C2SP checkpoint of the log's head (origin = the key's name). It checks
 * sequence and chain links, not every hash: run `atc verify` before signing a log you did not write.
 */
export async function runCheckpoint(args: readonly string[], io: CliIo = processIo): Promise<number> {
  const parsed = await parseOrExit(checkpointSpec, args, io);
  if (typeof parsed === 'number') return parsed;
  return exitOnFailure('checkpoint', io, async () => {
    const key = parseSignerKey(nodeCrypto, readText(parsed.values.get('key') as string, 'key file'));
    if (!key.ok) throw new CliFailure(2, `the key file: ${key.message}`);
    const { size, root } = await withLogHashes(parsed.positional[0] as string, (hashes) => rootOfEventHashes(merkleHasher(nodeCrypto), hashes));
    await io.out(signNote(nodeCrypto, key.key, formatCheckpointBody({ origin: key.key.name, size, root })).slice(0, -1));
    return 0;
  });
}

export const checkpointCommand: CliCommand = {
  summary: checkpointSpec.summary,
  spec: checkpointSpec,
  run: (args) => runCheckpoint(args),
};

import { closeSync, openSync, writeSync } from 'node:fs';
import type { CliCommand } from '../command';
import { processIo, type CliIo } from '../io';
import { parseOrExit, type CommandSpec } from '../options';
import { formatSignerKey, formatVerifierKey, generateSignerKey, nodeCrypto, verifierKeyOf } from '../../transparency';
import { isKeyName } from '../../transparency/signedNote';

export const keygenSpec: CommandSpec = {
  name: 'keygen',
  summary: 'create a log signing key (--origin <name> --out <file.key>), print its verifier key',
  usage: ['--origin <name> --out <file.key>'],
  description: 'A new Ed25519 note key; the private key file is created with mode 0600 and never overwritten. Prints the verifier key (publish it).',
  options: [
    { name: 'origin', value: '<name>', required: true, description: "the log's origin, a schema-less URL such as example.com/ledger (no spaces or \"+\")" },
    { name: 'out', value: '<file.key>', required: true, description: 'where to write the private key (must not exist)' },
  ],
};

/** `atc keygen`: a new Ed25519 note key named after the log's origin; the private key file is mode 0600 and never overwritten. */
export async function runKeygen(args: readonly string[], io: CliIo = processIo): Promise<number> {
  const parsed = await parseOrExit(keygenSpec, args, io);
  if (typeof parsed === 'number') return parsed;
  const origin = parsed.values.get('origin') as string;
  const out = parsed.values.get('out') as string;
  if (!isKeyName(origin)) {
    io.err('atc keygen: the origin must be non-empty, without spaces or "+" (a schema-less URL such as example.com/ledger)');
    return 2;
  }
  const key = generateSignerKey(nodeCrypto, origin);
  let fd: number;
  try {
    fd = openSync(out, 'wx', 0o600);
  } catch (error) {
    io.err(`atc keygen: cannot create ${out}: ${(error as NodeJS.ErrnoException).code ?? 'error'}${(error as NodeJS.ErrnoException).code === 'EEXIST' ? ' (a key file is never overwritten)' : ''}`);
    return 2;
  }
  try {
    writeSync(fd, `${formatSignerKey(key)}\n`);
  } finally {
    closeSync(fd);
  }
  await io.out(formatVerifierKey(verifierKeyOf(key)));
  return 0;
}

export const keygenCommand: CliCommand = {
  summary: keygenSpec.summary,
  spec: keygenSpec,
  run: (args) => runKeygen(args),
};

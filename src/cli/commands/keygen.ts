import { closeSync, openSync, writeSync } from 'node:fs';
import type { CliCommand } from '../command';
import { parseOptions, sqliteProcessIo, type SqliteCliIo } from '../../stores/sqlite/sqliteCliIo';
import { formatSignerKey, formatVerifierKey, generateSignerKey, nodeCrypto, verifierKeyOf } from '../../transparency';
import { isKeyName } from '../../transparency/signedNote';

const usage = 'usage: atc keygen --origin <name> --out <file.key>   (prints the verifier key)';

/** `atc keygen`: a new Ed25519 note key named after the log's origin; the private key file is mode 0600 and never overwritten. */
export async function runKeygen(args: readonly string[], io: SqliteCliIo = sqliteProcessIo): Promise<number> {
  const parsed = parseOptions(args, ['origin', 'out'], ['help']);
  if ('error' in parsed || parsed.flags.has('help') || parsed.positional.length !== 0 || !parsed.values.has('origin') || !parsed.values.has('out')) {
    if ('error' in parsed) io.err(`atc keygen: ${parsed.error}`);
    io.err(usage);
    return 'error' in parsed || !parsed.flags.has('help') ? 2 : 0;
  }
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
  summary: 'create a log signing key (--origin <name> --out <file.key>), print its verifier key',
  run: (args) => runKeygen(args),
};

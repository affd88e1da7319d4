import type { CliCommand } from '../command';
import { withLedgerAt } from '../ledgerFile';
import { processIo, type CliIo } from '../io';
import { ledgerOption, parseOrExit, type CommandSpec } from '../options';

export const revokeSpec: CommandSpec = {
  name: 'revoke',
  summary: 'revoke a grant in a ledger file (--abort: abort its running calls)',
  usage: ['--ledger <log.sqlite | postgres://…> <grantId> [--abort]'],
  description: 'A proxy or ledger sharing the log refuses the grant\'s next call (`revoked`), and so every grant delegated from it.',
  operands: { name: '<grantId>', min: 1, max: 1 },
  options: [
    ledgerOption,
    { name: 'abort', description: 'also abort the grant\'s running calls (their tools see the abort signal)' },
  ],
};

/** `atc revoke`: revokes a grant in a ledger file; a proxy on the same file refuses its next call. */
export async function runRevoke(args: readonly string[], io: CliIo = processIo): Promise<number> {
  const parsed = await parseOrExit(revokeSpec, args, io);
  if (typeof parsed === 'number') return parsed;
  const grantId = parsed.positional[0] as string;
  const abort = parsed.flags.has('abort');
  return withLedgerAt('revoke', parsed.values.get('ledger') as string, { create: false }, (l) => io.err(l), async (ledger) => {
    await ledger.revoke(grantId, { abortInFlight: abort });
    io.err(`atc revoke: revoked ${grantId}${abort ? ' (running calls aborted)' : ''}`);
    return 0;
  });
}

export const revokeCommand: CliCommand = {
  summary: revokeSpec.summary,
  spec: revokeSpec,
  run: (args) => runRevoke(args),
};

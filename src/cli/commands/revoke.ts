import type { CliCommand } from '../command';
import { withLedgerAt } from '../ledgerFile';
import { parseOptions, sqliteProcessIo, type SqliteCliIo } from '../../stores/sqlite/sqliteCliIo';

const usage = 'usage: atc revoke --ledger <log.sqlite | postgres://…> <grantId> [--abort]';

/** `atc revoke`: revokes a grant in a ledger file; a proxy on the same file refuses its next call. */
export async function runRevoke(args: readonly string[], io: SqliteCliIo = sqliteProcessIo): Promise<number> {
  const parsed = parseOptions(args, ['ledger'], ['abort', 'help']);
  if ('error' in parsed || parsed.flags.has('help') || parsed.positional.length !== 1 || !parsed.values.has('ledger')) {
    if ('error' in parsed) io.err(`atc revoke: ${parsed.error}`);
    io.err(usage);
    return 'error' in parsed || !parsed.flags.has('help') ? 2 : 0;
  }
  const grantId = parsed.positional[0] as string;
  const abort = parsed.flags.has('abort');
  return withLedgerAt('revoke', parsed.values.get('ledger') as string, { create: false }, (l) => io.err(l), async (ledger) => {
    await ledger.revoke(grantId, { abortInFlight: abort });
    io.err(`atc revoke: revoked ${grantId}${abort ? ' (running calls aborted)' : ''}`);
    return 0;
  });
}

export const revokeCommand: CliCommand = {
  summary: 'revoke a grant in a ledger file (--abort: abort its running calls)',
  run: (args) => runRevoke(args),
};

import type { CliCommand } from '../command';
import { sqliteProcessIo, type SqliteCliIo } from '../../stores/sqlite/sqliteCliIo';
import { isPolicySubcommand, parsePolicyArgs, policyUsage } from './policyArgs';

/**
 * `atc policy check | test | diff`: lint a policy against the real tools, decide sample calls under
 * it in a scratch ledger, and re-decide a log's calls under a candidate (docs/policies.md).
 * `now` is injectable for tests.
 */
export async function runPolicy(args: readonly string[], io: SqliteCliIo = sqliteProcessIo, now: () => number = Date.now): Promise<number> {
  const [sub, ...rest] = args;
  if (!isPolicySubcommand(sub)) {
    if (sub !== undefined && sub !== '--help' && sub !== '-h') io.err(`atc policy: unknown sub-command ${JSON.stringify(sub)} (check, test or diff)`);
    io.err(policyUsage);
    return sub === '--help' || sub === '-h' ? 0 : 2;
  }
  const parsed = parsePolicyArgs(sub, rest);
  if ('error' in parsed || parsed.help) {
    if ('error' in parsed) io.err(`atc policy ${sub}: ${parsed.error}`);
    io.err(policyUsage);
    return 'error' in parsed ? 2 : 0;
  }
  switch (parsed.sub) {
    case 'check':
      return (await import('./policyCheck')).runPolicyCheck(parsed, io, now());
    case 'test':
      return (await import('./policyTest')).runPolicyTest(parsed, io, now());
    case 'diff':
      return (await import('./policyDiff')).runPolicyDiff(parsed, io);
  }
}

export const policyCommand: CliCommand = {
  summary: 'check a policy against the real tools, test it with sample calls, diff it against a log (check | test | diff)',
  run: (args) => runPolicy(args),
};

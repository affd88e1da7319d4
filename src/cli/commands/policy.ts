import type { CliCommand } from '../command';
import { nearest } from '../nearest';
import { helpText, parseOrExit, usageError } from '../options';
import { processIo, type CliIo } from '../io';
import { isPolicySubcommand, policyArgs, policyGroupSpec, policySpecs } from './policyArgs';

const subcommands = ['check', 'test', 'diff'];

/**
 * `atc policy check | test | diff`: lint a policy against the real tools, decide sample calls under
 * it in a scratch ledger, and re-decide a log's calls under a candidate (docs/policies.md).
 * `now` is injectable for tests.
 */
export async function runPolicy(args: readonly string[], io: CliIo = processIo, now: () => number = Date.now): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === '--help' || sub === '-h') {
    await io.out(helpText(policyGroupSpec));
    return 0;
  }
  if (!isPolicySubcommand(sub)) {
    if (sub === undefined) return usageError(policyGroupSpec, io, 'missing sub-command: check, test or diff');
    // Echoed only when it is a short plain word: an operand may be a secret.
    const shown = /^[a-z-]{1,20}$/.test(sub) ? ` ${sub}` : '';
    const guess = nearest(sub, subcommands);
    return usageError(policyGroupSpec, io, `unknown sub-command${shown} (check, test or diff${guess !== undefined ? `; did you mean ${guess}?` : ''})`);
  }
  const spec = policySpecs[sub];
  const parsed = await parseOrExit(spec, rest, io);
  if (typeof parsed === 'number') return parsed;
  const read = policyArgs(sub, parsed);
  if ('error' in read) return usageError(spec, io, read.error);
  switch (read.sub) {
    case 'check':
      if (read.gateway !== undefined) return (await import('./policyCheckGateway')).runPolicyCheckGateway(read.gateway, read.json, io, now());
      return (await import('./policyCheck')).runPolicyCheck(read, io, now());
    case 'test':
      return (await import('./policyTest')).runPolicyTest(read, io, now());
    case 'diff':
      return (await import('./policyDiff')).runPolicyDiff(read, io);
  }
}

export const policyCommand: CliCommand = {
  summary: policyGroupSpec.summary,
  spec: policyGroupSpec,
  run: (args) => runPolicy(args),
};

import type { CliCommand } from '../command';
import { runDecision } from '../approvalDecision';
import { processIo, type CliIo } from '../io';
import { ledgerOption, parseOrExit, type CommandSpec } from '../options';

export const denySpec: CommandSpec = {
  name: 'deny',
  summary: 'deny a pending call (--by NAME): its invoke is rejected approval_denied and its budget released',
  usage: ['<approvalId> --ledger <log.sqlite | postgres://…> --by <name> [--reason <text>]'],
  description: 'Decides one approval listed by atc approvals, from any process sharing the log; the decision and --by are recorded in the log. Exit 0 decided, 1 refused (unknown id, already resolved, or past its deadline), 2 usage.',
  operands: { name: '<approvalId>', min: 1, max: 1 },
  options: [
    ledgerOption,
    { name: 'by', value: '<name>', required: true, description: 'who decides (recorded in the event): 1-256 characters' },
    { name: 'reason', value: '<text>', description: 'why (at most 2,000 characters), kept with the decision; never shown to the agent' },
  ],
};

/** `atc deny`: deny a pending call (--by NAME): its invoke is rejected approval_denied and its budget released. */
export async function runDeny(args: readonly string[], io: CliIo = processIo): Promise<number> {
  const parsed = await parseOrExit(denySpec, args, io);
  if (typeof parsed === 'number') return parsed;
  return runDecision('deny', parsed, io);
}

export const denyCommand: CliCommand = {
  summary: denySpec.summary,
  spec: denySpec,
  run: (args) => runDeny(args),
};

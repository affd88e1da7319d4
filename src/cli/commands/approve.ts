import type { CliCommand } from '../command';
import { runDecision } from '../approvalDecision';
import { processIo, type CliIo } from '../io';
import { ledgerOption, parseOrExit, type CommandSpec } from '../options';

export const approveSpec: CommandSpec = {
  name: 'approve',
  summary: 'approve a pending call (--by NAME): the process whose invoke waits runs it',
  usage: ['<approvalId> --ledger <log.sqlite | postgres://…> --by <name> [--note <text>]'],
  description: 'Decides one approval listed by atc approvals, from any process sharing the log; the decision and --by are recorded in the log. Exit 0 decided, 1 refused (unknown id, already resolved, or past its deadline), 2 usage.',
  operands: { name: '<approvalId>', min: 1, max: 1 },
  options: [
    ledgerOption,
    { name: 'by', value: '<name>', required: true, description: 'who decides (recorded in the event): 1-256 characters' },
    { name: 'note', value: '<text>', description: 'a note kept with the decision (at most 2,000 characters)' },
  ],
};

/** `atc approve`: approve a pending call (--by NAME): the process whose invoke waits runs it. */
export async function runApprove(args: readonly string[], io: CliIo = processIo): Promise<number> {
  const parsed = await parseOrExit(approveSpec, args, io);
  if (typeof parsed === 'number') return parsed;
  return runDecision('approve', parsed, io);
}

export const approveCommand: CliCommand = {
  summary: approveSpec.summary,
  spec: approveSpec,
  run: (args) => runApprove(args),
};

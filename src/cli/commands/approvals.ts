import type { CliCommand } from '../command';
import { withLedgerAt } from '../ledgerFile';
import type { PendingApprovalView } from '../../stream/approvalTypes';
import { processIo, type CliIo } from '../io';
import { ledgerOption, parseOrExit, type CommandSpec } from '../options';

export const approvalsSpec: CommandSpec = {
  name: 'approvals',
  summary: 'list the calls of a ledger waiting for a person (--json); decide them with atc approve / atc deny',
  usage: ['--ledger <log.sqlite | postgres://…> [--json]'],
  description: 'One line per pending approval, oldest first: approval id, tool, grant, call, when it was asked and its deadline (UTC). Never an argument value or a token: compare the argument digest with the call you were shown.',
  options: [
    ledgerOption,
    { name: 'json', description: 'print one JSON array of { approvalId, callId, grantId, tool, argsDigest, requestedAt, deadline } instead of the table' },
  ],
};

function line(p: PendingApprovalView): string {
  return `${p.approvalId}  ${p.tool}  grant ${p.grantId}  call ${p.callId}  asked ${new Date(p.requestedAt).toISOString()}  deadline ${new Date(p.deadline).toISOString()}`;
}

/** `atc approvals`: the pending approvals of a ledger, as lines or (`--json`) one JSON array. */
export async function runApprovals(args: readonly string[], io: CliIo = processIo): Promise<number> {
  const parsed = await parseOrExit(approvalsSpec, args, io);
  if (typeof parsed === 'number') return parsed;
  return withLedgerAt('approvals', parsed.values.get('ledger') as string, { create: false }, (l) => io.err(l), async (ledger) => {
    const pending = ledger.pendingApprovals();
    if (parsed.flags.has('json')) await io.out(JSON.stringify(pending));
    else for (const p of pending) await io.out(line(p));
    return 0;
  });
}

export const approvalsCommand: CliCommand = {
  summary: approvalsSpec.summary,
  spec: approvalsSpec,
  run: (args) => runApprovals(args),
};

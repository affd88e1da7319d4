import { withLedgerAt } from './ledgerFile';
import type { CliIo } from './io';
import { printable } from '../text/printable';
import type { ParsedCommand } from './options';

/**
 * `atc approve` / `atc deny`: one person's decision on one pending approval, appended to the shared
 * log; the process whose invoke waits folds it and runs (or rejects) the call. Exit 0 decided, 1
 * refused (unknown, already resolved, past its deadline: said on stderr), 2 usage or bad input.
 */
export async function runDecision(name: 'approve' | 'deny', parsed: ParsedCommand, io: CliIo): Promise<number> {
  const approvalId = parsed.positional[0] as string;
  const by = parsed.values.get('by') as string;
  const text = parsed.values.get(name === 'approve' ? 'note' : 'reason');
  return withLedgerAt(name, parsed.values.get('ledger') as string, { create: false }, (l) => io.err(l), async (ledger) => {
    let outcome;
    try {
      outcome = name === 'approve'
        ? await ledger.approve(approvalId, text === undefined ? { by } : { by, note: text })
        : await ledger.deny(approvalId, text === undefined ? { by } : { by, reason: text });
    } catch (error) {
      if (!(error instanceof TypeError)) throw error;
      io.err(`atc ${name}: ${printable(error.message)}`);
      return 2;
    }
    if (outcome.status === 'refused') {
      io.err(`atc ${name}: refused: ${outcome.reason} (${printable(approvalId)})`);
      return 1;
    }
    io.err(`atc ${name}: ${outcome.status} ${printable(approvalId)} by ${printable(by)}`);
    return 0;
  });
}

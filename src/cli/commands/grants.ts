import type { CliCommand } from '../command';
import { withLedgerAt } from '../ledgerFile';
import { ancestorRecords } from '../../domain/grantChain';
import { shardValues } from '../../domain/shardedMap';
import type { Ledger, Usage } from '../../stream/types';
import { processIo, type CliIo } from '../io';
import { ledgerOption, parseOrExit, type CommandSpec } from '../options';

export const grantsSpec: CommandSpec = {
  name: 'grants',
  summary: 'list the grants of a ledger file with status, parents and usage (--json)',
  usage: ['--ledger <log.sqlite | postgres://…> [--json]'],
  description: 'One line per grant: id, status now (active, revoked, expired; a grant under a revoked one is revoked), calls and bytes used of the limit, parent. Never a token.',
  options: [
    ledgerOption,
    { name: 'json', description: 'print one JSON array of { grantId, parentGrantId?, status, usage } instead of the table' },
  ],
};

export interface GrantListing {
  readonly grantId: string;
  readonly parentGrantId?: string;
  readonly status: 'active' | 'revoked' | 'expired';
  readonly usage: Usage;
}

/** Every grant of a ledger with its status at `now` and its usage; never a token. */
export function listGrants(ledger: Ledger, now: number): GrantListing[] {
  const state = ledger.state();
  const grants = Array.from(shardValues(state.grants)).sort((a, b) => a.issuedAt - b.issuedAt || a.grantId.localeCompare(b.grantId));
  return grants.map((grant) => {
    const parent = grant.parentGrantId;
    return {
      grantId: grant.grantId,
      ...(typeof parent === 'string' ? { parentGrantId: parent } : {}),
      // Effective status: a grant whose ancestor is revoked is revoked too (from that event on).
      status: grant.revoked || (ancestorRecords(state, grant) ?? []).some((a) => a.revoked) ? 'revoked' : now >= grant.scope.expiresAt ? 'expired' : 'active',
      usage: ledger.usage(grant.grantId),
    };
  });
}

function line(g: GrantListing): string {
  const u = g.usage;
  return `${g.grantId.padEnd(36)} ${g.status.padEnd(8)} calls ${u.calls.used}/${u.calls.limit}  bytes ${u.inputBytes.used}/${u.inputBytes.limit}${g.parentGrantId !== undefined ? `  parent ${g.parentGrantId}` : ''}`;
}

/** `atc grants`: the grants of a ledger file, as a table or (`--json`) one JSON array. */
export async function runGrants(args: readonly string[], io: CliIo = processIo, now: () => number = Date.now): Promise<number> {
  const parsed = await parseOrExit(grantsSpec, args, io);
  if (typeof parsed === 'number') return parsed;
  return withLedgerAt('grants', parsed.values.get('ledger') as string, { create: false }, (l) => io.err(l), async (ledger) => {
    const grants = listGrants(ledger, now());
    if (parsed.flags.has('json')) await io.out(JSON.stringify(grants));
    else for (const g of grants) await io.out(line(g));
    return 0;
  });
}

export const grantsCommand: CliCommand = {
  summary: grantsSpec.summary,
  spec: grantsSpec,
  run: (args) => runGrants(args),
};

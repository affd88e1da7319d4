import { splitCommand } from '../ledgerFile';
import { upstreamTarget } from '../upstreamArgs';
import type { UpstreamTarget } from '../../integrations/mcp/upstream';
import { parseOptions } from '../../stores/sqlite/sqliteCliIo';

/**
 * The options of `atc policy check | test | diff`, parsed in one place (one table of options per
 * sub-command), so the CLI help rework can read them from here.
 */
export const policyUsage = `usage: atc policy check <policy.json> [-- <command…> | --url U | --ledger L] [--json]
       atc policy test  <policy.json> <cases.json> [-- <command…> | --url U | --ledger L] [--json]
       atc policy diff  <log> --policy <candidate.json> [--grant ID] [--json]
  (L and <log>: a SQLite file, a postgres:// URL or a JSON Lines file; exit 0 clean, 1 problems, mismatches or changes, 2 usage)`;

export type PolicySubcommand = 'check' | 'test' | 'diff';

/** Where the tools a policy is checked against come from. */
export type ToolSource = { readonly kind: 'upstream'; readonly target: UpstreamTarget } | { readonly kind: 'log'; readonly target: string } | { readonly kind: 'none' };

export interface PolicyArgs {
  readonly sub: PolicySubcommand;
  readonly help: boolean;
  readonly json: boolean;
  readonly positional: readonly string[];
  readonly tools: ToolSource;
  /** diff: the candidate policy file and the grant to compare. */
  readonly policy?: string;
  readonly grant?: string;
}

const table: { readonly [S in PolicySubcommand]: { readonly valued: readonly string[]; readonly flags: readonly string[]; readonly positional: number; readonly upstream: boolean } } = {
  check: { valued: ['url', 'ledger'], flags: ['json', 'help'], positional: 1, upstream: true },
  test: { valued: ['url', 'ledger'], flags: ['json', 'help'], positional: 2, upstream: true },
  diff: { valued: ['policy', 'grant'], flags: ['json', 'help'], positional: 1, upstream: false },
};

export function isPolicySubcommand(name: string | undefined): name is PolicySubcommand {
  return name === 'check' || name === 'test' || name === 'diff';
}

/** Parses `atc policy <sub> …`'s arguments (after the sub-command); an error is a usage error. */
export function parsePolicyArgs(sub: PolicySubcommand, args: readonly string[]): PolicyArgs | { readonly error: string } {
  const spec = table[sub];
  const split = spec.upstream ? splitCommand(args) : { options: args, command: undefined };
  const parsed = parseOptions(split.options, spec.valued, spec.flags);
  if ('error' in parsed) return parsed;
  const help = parsed.flags.has('help');
  const base = { sub, help, json: parsed.flags.has('json'), positional: parsed.positional };
  if (help) return { ...base, tools: { kind: 'none' } };
  if (parsed.positional.length !== spec.positional) return { error: `atc policy ${sub} takes ${spec.positional === 1 ? 'one file' : 'two files'}` };
  if (sub === 'diff') {
    const policy = parsed.values.get('policy');
    if (policy === undefined) return { error: 'atc policy diff needs --policy <candidate.json>' };
    const grant = parsed.values.get('grant');
    return { ...base, tools: { kind: 'none' }, policy, ...(grant !== undefined ? { grant } : {}) };
  }
  const ledger = parsed.values.get('ledger');
  const upstream = upstreamTarget(split.command, parsed.values.get('url'));
  if (upstream !== undefined && 'error' in upstream) return upstream;
  if (upstream !== undefined && ledger !== undefined) return { error: 'give the tools from one place: -- <command…>, --url or --ledger' };
  const tools: ToolSource = upstream !== undefined ? { kind: 'upstream', target: upstream } : ledger !== undefined ? { kind: 'log', target: ledger } : { kind: 'none' };
  return { ...base, tools };
}

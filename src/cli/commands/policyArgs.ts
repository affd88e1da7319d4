import { upstreamTarget } from '../upstreamArgs';
import type { CommandSpec, OptionSpec, ParsedCommand } from '../options';
import type { UpstreamTarget } from '../../integrations/mcp/upstream';

export type PolicySubcommand = 'check' | 'test' | 'diff';

/** Where the tools a policy is checked against come from. */
export type ToolSource = { readonly kind: 'upstream'; readonly target: UpstreamTarget } | { readonly kind: 'log'; readonly target: string } | { readonly kind: 'none' };

export interface PolicyArgs {
  readonly sub: PolicySubcommand;
  readonly json: boolean;
  readonly positional: readonly string[];
  readonly tools: ToolSource;
  /** diff: the candidate policy file and the grant to compare. */
  readonly policy?: string;
  readonly grant?: string;
  /** check: a gateway config whose every policy is checked against its upstreams' tools. */
  readonly gateway?: string;
}

const logs = 'a SQLite file, a postgres:// URL or a JSON Lines file';
const json: OptionSpec = { name: 'json', description: 'print one JSON object instead of lines' };
const toolOptions: readonly OptionSpec[] = [
  { name: 'upstream-command', value: '"<command> [args…]"', description: 'take the tools from this MCP server (started, listed, stopped), as words split on spaces; same as -- <command> [args…]' },
  { name: 'url', value: '<http://…>', description: 'take the tools from this MCP server over Streamable HTTP' },
  { name: 'ledger', value: '<log>', description: `take the tools (and their schemas) from a log's tool.registered events: ${logs}` },
  json,
];
const gatewayOption: OptionSpec = { name: 'gateway', value: '<gateway.json>', description: "check every policy of a gateway config instead of a policy file, against the tools its upstreams list (started, listed, stopped) under the gateway's names; pointers are into the config" };
const diffOptions: readonly OptionSpec[] = [
  { name: 'policy', value: '<candidate.json>', required: true, description: 'the candidate policy the logged calls are re-decided under' },
  { name: 'grant', value: 'ID', description: 'compare only the calls of this grant (and its delegations); default every root grant' },
  json,
];

/** One option table per sub-command: its help and its parser (src/cli/options.ts). */
export const policySpecs: { readonly [S in PolicySubcommand]: CommandSpec } = {
  check: {
    name: 'policy check',
    summary: 'lint a policy against the tools an upstream lists or a log holds; each problem with a JSON Pointer into the policy',
    usage: ['<policy.json> [-- <command> [args…] | --upstream-command "<command…>" | --url <http://…> | --ledger <log>] [--json]', '--gateway <gateway.json> [--json]'],
    description: 'Exit 0: no problem; 1: problems; 2: usage, or the policy, config or tools could not be read. Without a tool source, the rules that need the tools are not checked (said on stderr). With --gateway each problem also has a level: an error stops `atc gateway` from starting, a warning does not. docs/policies.md lists the rules and levels.',
    rest: true,
    operands: { name: 'policy file', min: 0, max: 1 },
    options: [...toolOptions.slice(0, -1), gatewayOption, json],
  },
  test: {
    name: 'policy test',
    summary: 'decide a file of sample calls under a policy in a scratch in-memory ledger; expected against actual',
    usage: ['<policy.json> <cases.json> [-- <command> [args…] | --upstream-command "<command…>" | --url <http://…> | --ledger <log>] [--json]'],
    description: 'cases.json: [{ "tool", "args", "at"?, "expect": "admitted" | "<reason>" }]. Nothing runs and nothing is appended to any real log. Exit 1 on any mismatch.',
    rest: true,
    operands: { name: 'policy and cases files', min: 2, max: 2 },
    options: toolOptions,
  },
  diff: {
    name: 'policy diff',
    summary: 'list the logged calls whose decision a candidate policy would change',
    usage: ['<log> --policy <candidate.json> [--grant ID] [--json]'],
    description: `<log>: ${logs}. Says which rules it could not re-decide (argument narrowing: argument values are never logged) and for how many calls. Exit 1 when a decision would change.`,
    operands: { name: 'log', min: 1, max: 1 },
    options: diffOptions,
  },
};

/** `atc policy --help`: the three sub-commands, and every option any of them takes. */
export const policyGroupSpec: CommandSpec = {
  name: 'policy',
  summary: 'check a policy against the real tools, test it with sample calls, diff it against a log (check | test | diff)',
  usage: [`check ${policySpecs.check.usage[0] as string}`, `check ${policySpecs.check.usage[1] as string}`, `test  ${policySpecs.test.usage[0] as string}`, `diff  ${policySpecs.diff.usage[0] as string}`],
  description: 'Run `atc policy <check | test | diff> --help` for one sub-command. docs/policies.md has the format, examples and a CI workflow.',
  options: [...toolOptions.filter((o) => o !== json), gatewayOption, ...diffOptions],
};

export function isPolicySubcommand(name: string | undefined): name is PolicySubcommand {
  return name === 'check' || name === 'test' || name === 'diff';
}

/** What a parsed sub-command asks for; an error is a usage error. */
export function policyArgs(sub: PolicySubcommand, parsed: ParsedCommand): PolicyArgs | { readonly error: string } {
  const base = { sub, json: parsed.flags.has('json'), positional: parsed.positional };
  if (sub === 'diff') {
    const grant = parsed.values.get('grant');
    return { ...base, tools: { kind: 'none' }, policy: parsed.values.get('policy') as string, ...(grant !== undefined ? { grant } : {}) };
  }
  const ledger = parsed.values.get('ledger');
  const gateway = sub === 'check' ? parsed.values.get('gateway') : undefined;
  if (sub === 'check' && (gateway !== undefined) === (parsed.positional.length === 1)) return { error: 'give a policy file or --gateway <gateway.json>, one of them' };
  if (gateway !== undefined) {
    if (ledger !== undefined || parsed.rest !== undefined || parsed.values.has('upstream-command') || parsed.values.has('url')) return { error: "--gateway takes the tools from the config's upstreams: no -- <command…>, --upstream-command, --url or --ledger" };
    return { ...base, tools: { kind: 'none' }, gateway };
  }
  const upstream = upstreamTarget({ dashDash: parsed.rest, commandOption: parsed.values.get('upstream-command'), url: parsed.values.get('url') });
  if (upstream !== undefined && 'error' in upstream) return upstream;
  if (upstream !== undefined && ledger !== undefined) return { error: 'give the tools from one place: -- <command…>, --upstream-command, --url or --ledger' };
  const tools: ToolSource = upstream !== undefined ? { kind: 'upstream', target: upstream } : ledger !== undefined ? { kind: 'log', target: ledger } : { kind: 'none' };
  return { ...base, tools };
}

import { parseArgs } from 'node:util';
import { nearest } from './nearest';
import type { CliIo } from './io';

/**
 * One option of a command, as its help shows it: `--name <value>` (a flag when `value` is absent).
 * A command's options are one table, so its help and its parser never disagree.
 */
export interface OptionSpec {
  readonly name: string;
  /** The value's placeholder, e.g. `<file>`; absent for a flag. */
  readonly value?: string;
  readonly short?: string;
  readonly description: string;
  /** Refused when absent (the error names it and says what it is). */
  readonly required?: boolean;
  /** May be given more than once; every value is kept in order. */
  readonly multiple?: boolean;
}

/** What `atc <command> --help` prints, and what the parser accepts. */
export interface CommandSpec {
  readonly name: string;
  readonly summary: string;
  /** Synopsis lines, without the leading `atc <name>`. */
  readonly usage: readonly string[];
  /** Paragraphs after the synopsis. */
  readonly description?: string;
  readonly options: readonly OptionSpec[];
  /** How many operands (non-option arguments) it takes, and what they are called in errors. */
  readonly operands?: { readonly name: string; readonly min: number; readonly max: number };
  /** Whether `-- <command> [args…]` is accepted (kept apart as `rest`). */
  readonly rest?: boolean;
  /** How it is started when it is not `atc <name>`: a lab script, `npm run reproduce --`. */
  readonly runAs?: string;
}

/** The command line before its arguments, as help and errors show it. */
const invocation = (spec: CommandSpec): string => spec.runAs ?? `atc ${spec.name}`;

export interface ParsedCommand {
  readonly positional: readonly string[];
  readonly values: ReadonlyMap<string, string>;
  readonly lists: ReadonlyMap<string, readonly string[]>;
  readonly flags: ReadonlySet<string>;
  /** What follows `--`, when the command takes it and it was given. */
  readonly rest: readonly string[] | undefined;
}

// Options several commands take, described once so their help never drifts apart.
/** `--ledger`: the ledger a command opens (src/cli/ledgerFile.ts). */
export const ledgerOption: OptionSpec = { name: 'ledger', value: '<log.sqlite | postgres://…>', required: true, description: 'the ledger: a SQLite file or a PostgreSQL URL (postgres://…[?schema=atc])' };
/** `--ledger` of a command that starts a ledger: a SQLite file not there yet is created. */
export const creatingLedgerOption: OptionSpec = { ...ledgerOption, description: 'the ledger: a SQLite file (created if absent) or a PostgreSQL URL (postgres://…[?schema=atc])' };
/** The upstream MCP server of `atc proxy` and `atc issue` (src/cli/upstreamArgs.ts). */
export const upstreamOptions: readonly OptionSpec[] = [
  { name: 'upstream-command', value: '"<command> [args…]"', description: 'the upstream MCP server to start, as words split on spaces (no shell, no quotes); same as -- <command> [args…]' },
  { name: 'url', value: '<http://…>', description: 'the upstream MCP server over Streamable HTTP' },
];
/** A signed checkpoint's verifier key (`atc verify`, `atc serve`: with --checkpoint; `atc verify-proof`). */
export const vkeyOption: OptionSpec = { name: 'vkey', value: '<key|@file>', description: "the checkpoint's verifier key, or @file holding it (with --checkpoint)" };

const helpOption: OptionSpec = { name: 'help', short: 'h', description: 'print this help and exit' };
/** Long enough for any real option name; a longer one is not echoed whole. */
const echoedNameMax = 40;

function optionLabel(o: OptionSpec): string {
  return `${o.short !== undefined ? `-${o.short}, ` : '    '}--${o.name}${o.value !== undefined ? ` ${o.value}` : ''}`;
}

/** The full help of a command: synopsis, description, every option described. */
export function helpText(spec: CommandSpec): string {
  const options = [...spec.options, helpOption];
  const width = Math.max(...options.map((o) => optionLabel(o).length));
  const lines = spec.usage.map((u, i) => `${i === 0 ? 'usage:' : '      '} ${invocation(spec)} ${u}`);
  lines.push('', spec.summary.charAt(0).toUpperCase() + spec.summary.slice(1) + '.');
  if (spec.description !== undefined) lines.push('', spec.description);
  lines.push('', 'options:');
  for (const o of options) lines.push(`  ${optionLabel(o).padEnd(width)}  ${o.description}${o.required === true ? ' (required)' : ''}`);
  return lines.join('\n');
}

function shown(name: string): string {
  return name.length > echoedNameMax ? `${name.slice(0, echoedNameMax)}…` : name;
}

function unknownOption(raw: string, spec: CommandSpec): string {
  const names = [...spec.options, helpOption].map((o) => `--${o.name}`);
  const guess = nearest(raw.split('=')[0] as string, names);
  return `unknown option ${shown(raw)}${guess !== undefined ? ` (did you mean ${guess}?)` : ''}`;
}

/**
 * Parses `args` against the command's table (with `node:util` parseArgs): unknown options (with the
 * nearest known one), missing values and required options, and operand counts are errors. Operand
 * values are never echoed: one may be a token or a secret path.
 */
export function parseCommand(spec: CommandSpec, args: readonly string[]): ParsedCommand | 'help' | { readonly error: string } {
  const cut = spec.rest === true ? args.indexOf('--') : -1;
  const own = cut < 0 ? args : args.slice(0, cut);
  const config: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }> = {};
  for (const o of [...spec.options, helpOption]) config[o.name] = { type: o.value !== undefined ? 'string' : 'boolean', ...(o.short !== undefined ? { short: o.short } : {}), ...(o.multiple === true ? { multiple: true } : {}) };
  const { tokens } = parseArgs({ args: [...own], options: config, strict: false, allowPositionals: true, tokens: true });
  const positional: string[] = [];
  const values = new Map<string, string>();
  const lists = new Map<string, string[]>();
  const flags = new Set<string>();
  // Help wins over anything else on the line, so a mistyped option never hides it.
  if (tokens.some((t) => t.kind === 'option' && t.name === 'help')) return 'help';
  for (const token of tokens) {
    if (token.kind === 'positional') positional.push(token.value);
    else if (token.kind === 'option-terminator') return { error: 'unexpected --' };
    else {
      const option = spec.options.find((o) => o.name === token.name) ?? (token.name === 'help' ? helpOption : undefined);
      if (option === undefined) return { error: unknownOption(token.rawName, spec) };
      if (option === helpOption) return 'help';
      if (option.value === undefined) {
        if (token.inlineValue === true) return { error: `--${option.name} takes no value` };
        flags.add(option.name);
        continue;
      }
      const value = token.value;
      if (value === undefined || (token.inlineValue !== true && value.startsWith('-') && value !== '-')) return { error: `--${option.name} needs a value: ${option.value}` };
      values.set(option.name, value);
      lists.set(option.name, [...(lists.get(option.name) ?? []), value]);
    }
  }
  for (const o of spec.options) if (o.required === true && !values.has(o.name)) return { error: `missing --${o.name} ${o.value ?? ''}: ${o.description}`.trimEnd() };
  const operands = spec.operands ?? { name: 'argument', min: 0, max: 0 };
  if (positional.length < operands.min) return { error: `missing ${operands.name}` };
  if (positional.length > operands.max) return { error: operands.max === 0 ? `takes no ${operands.name}; unexpected argument number ${positional.length}` : `too many arguments (at most ${operands.max} ${operands.name})` };
  return { positional, values, lists, flags, rest: cut < 0 ? undefined : args.slice(cut + 1) };
}

/**
 * `parseCommand` with the CLI's conventions: help on stdout (exit 0); an error on stderr, naming
 * what is wrong, with a pointer to the help (exit 2). Returns the parse, or the exit code.
 */
export async function parseOrExit(spec: CommandSpec, args: readonly string[], io: CliIo): Promise<ParsedCommand | number> {
  const parsed = parseCommand(spec, args);
  if (parsed === 'help') {
    await io.out(helpText(spec));
    return 0;
  }
  if ('error' in parsed) return usageError(spec, io, parsed.error);
  return parsed;
}

/** A usage error: what is wrong, then how to get the help. Exit code 2. */
export function usageError(spec: CommandSpec, io: CliIo, message: string): number {
  io.err(`${spec.runAs === undefined ? `atc ${spec.name}` : spec.name}: ${message}`);
  io.err(`run '${invocation(spec)} --help' for its options`);
  return 2;
}

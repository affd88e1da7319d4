import type { CliIo } from '../io';
import { checkPolicy, type PolicyProblem } from '../../policy/checkPolicy';
import type { PolicyArgs } from './policyArgs';
import { loadPolicyTools, readBoundedText } from '../policyTools';
import { printable } from '../../text/printable';

const sourceNames = { upstream: 'the upstream', log: 'the log', none: 'no tool list' } as const;

/** `atc policy check`: lints a policy file; exit 0 clean, 1 problems, 2 unreadable file or tools. */
export async function runPolicyCheck(args: PolicyArgs, io: CliIo, now: number): Promise<number> {
  const file = args.positional[0] as string;
  let value: unknown;
  let tools;
  try {
    const text = readBoundedText(file);
    try {
      value = JSON.parse(text) as unknown;
    } catch {
      value = undefined;
    }
    tools = await loadPolicyTools(args.tools);
  } catch (error) {
    io.err(`atc policy check: ${(error as Error).message}`);
    return 2;
  }
  const problems: PolicyProblem[] = value === undefined ? [{ pointer: '', code: 'malformed', message: 'the policy file is not JSON' }] : checkPolicy(value, tools, { now });
  if (args.json) {
    await io.out(JSON.stringify({ ok: problems.length === 0, tools: args.tools.kind, problems }));
  } else {
    for (const p of problems) await io.out(printable(`${file}#${p.pointer} ${p.code}: ${p.message}`));
    const against = tools === undefined ? sourceNames.none : `${tools.length} tools from ${sourceNames[args.tools.kind]}`;
    await io.out(problems.length === 0 ? `ok: no problems (checked against ${against})` : `${problems.length} problem(s) (checked against ${against})`);
  }
  if (tools === undefined) io.err('atc policy check: no tool list (-- <command…>, --url or --ledger): unknown tools, undeclared properties and arguments were not checked');
  return problems.length === 0 ? 0 : 1;
}

import type { CliIo } from '../io';
import type { LedgerEvent } from '../../domain/events';
import { parsePolicy, type Policy } from '../../integrations/mcp/policy';
import { diffGrantProblem, diffPolicy, type DecisionChange, type PolicyDiff } from '../../policy/policyDiff';
import { SchemaCompiler } from '../../tools/schemas';
import type { PolicyArgs } from './policyArgs';
import { readVerifiedLog } from '../logEvents';
import { readBoundedText } from '../policyTools';
import { printable } from '../../text/printable';

const ruleNames = { input_schema: "the tool's input schema (the call never reached it)", argument_narrowing: 'argument narrowing', resources: 'resources (other templates or narrower scopes)', meters: 'meters (the cost was never logged)', approvals: 'an approval schema (argument values are never logged; taken as not asking)' } as const;
const changesShownMax = 200;

function changeLine(c: DecisionChange): string {
  const what = c.hop === undefined ? c.tool : `${c.tool} fetch hop ${c.hop}`;
  const assuming = c.assuming === undefined ? '' : ` (if it passes ${c.assuming.join(', ')})`;
  return printable(`  seq ${c.seq} ${what} (${c.callId}): ${c.before} → ${c.after}${assuming}`);
}

async function printDiff(log: string, file: string, diff: PolicyDiff, io: CliIo): Promise<void> {
  await io.out(`atc policy diff ${log}: ${file} in place of ${diff.grants.length} grant(s); ${diff.calls} call(s) re-decided`);
  for (const r of diff.refused) await io.out(`  seq ${r.seq} grant ${r.grantId}: the candidate could not be issued there (${r.message}); its calls are left out`);
  await io.out(`changed: ${diff.changes.length}`);
  for (const c of diff.changes.slice(0, changesShownMax)) await io.out(changeLine(c));
  if (diff.changes.length > changesShownMax) await io.out(`  … and ${diff.changes.length - changesShownMax} more (--json lists all)`);
  const open = Object.entries(diff.open).filter(([, n]) => n > 0);
  if (open.length > 0) {
    await io.out('not re-decided (argument values are never logged), taken as passing:');
    for (const [rule, n] of open) await io.out(`  ${ruleNames[rule as keyof typeof ruleNames]}: ${n} call(s)`);
  }
  if (diff.unavailable > 0) await io.out(`  ${diff.unavailable} call(s) logged ledger_unavailable (a store failure, not a rule): left as logged`);
}

/** `atc policy diff`: exit 0 no decision would change, 1 some would (or the candidate cannot be issued), 2 usage or an unreadable log. */
export async function runPolicyDiff(args: PolicyArgs, io: CliIo): Promise<number> {
  const log = args.positional[0] as string;
  const file = args.policy as string;
  let candidate: Policy;
  let events: LedgerEvent[];
  try {
    candidate = parsePolicy(readBoundedText(file));
    const compiler = new SchemaCompiler();
    for (const [tool, schema] of Object.entries(candidate.args ?? {})) {
      try {
        compiler.compileNarrowing(schema);
      } catch (error) {
        throw new Error(`policy args[${JSON.stringify(tool)}]: does not compile: ${(error as Error).message}`);
      }
    }
    events = await readVerifiedLog(log);
  } catch (error) {
    io.err(`atc policy diff: ${(error as Error).message}`);
    return 2;
  }
  const problem = args.grant === undefined ? undefined : diffGrantProblem(events, args.grant);
  if (problem !== undefined) {
    io.err(`atc policy diff: ${problem}`);
    return 2;
  }
  const diff = diffPolicy(events, candidate, args.grant !== undefined ? { grantId: args.grant } : {});
  if (args.json) await io.out(JSON.stringify({ ok: diff.changes.length === 0 && diff.refused.length === 0, ...diff }));
  else await printDiff(log, file, diff, io);
  return diff.changes.length === 0 && diff.refused.length === 0 ? 0 : 1;
}

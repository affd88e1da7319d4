import type { CliIo } from '../io';
import { parsePolicy, type Policy } from '../../integrations/mcp/policy';
import { casesBytesMax, parsePolicyCases, type PolicyCase } from '../../policy/policyCases';
import { runPolicyCases, type CaseResult } from '../../policy/runCases';
import type { PolicyArgs } from './policyArgs';
import { loadPolicyTools, readBoundedText } from '../policyTools';
import { printable } from '../../text/printable';

function line(r: CaseResult): string {
  const label = r.name !== undefined ? ` ${JSON.stringify(r.name)}` : '';
  return printable(`${r.ok ? 'ok  ' : 'FAIL'} #${r.index}${label} ${r.tool} at ${new Date(r.at).toISOString()}: expected ${r.expected}, got ${r.actual}`);
}

/**
 * `atc policy test`: decides the cases in a scratch in-memory ledger (nothing touches a real log;
 * no tool body runs). Exit 0 all as expected, 1 any mismatch, 2 a file or the tools cannot be read.
 */
export async function runPolicyTest(args: PolicyArgs, io: CliIo, now: number): Promise<number> {
  const [policyFile, casesFile] = args.positional as [string, string];
  let policy: Policy;
  let cases: readonly PolicyCase[];
  try {
    policy = parsePolicy(readBoundedText(policyFile));
    cases = parsePolicyCases(readBoundedText(casesFile, casesBytesMax), now);
  } catch (error) {
    io.err(`atc policy test: ${(error as Error).message}`);
    return 2;
  }
  let run;
  try {
    run = await runPolicyCases(policy, await loadPolicyTools(args.tools), cases, { now });
  } catch (error) {
    io.err(`atc policy test: ${(error as Error).message}`);
    return 2;
  }
  for (const skipped of run.skippedTools) io.err(printable(`atc policy test: tool ${skipped.name} not registered: ${skipped.why}`));
  const failed = run.results.filter((r) => !r.ok).length;
  if (args.json) await io.out(JSON.stringify({ ok: failed === 0, results: run.results }));
  else {
    for (const r of run.results) await io.out(line(r));
    await io.out(`${run.results.length - failed} of ${run.results.length} case(s) as expected`);
  }
  return failed === 0 ? 0 : 1;
}

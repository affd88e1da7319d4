import type { JsonObject } from '../domain/json';
import { policyIssueOptions, type Policy } from '../integrations/mcp/policy';
import { ResourceMapping } from '../integrations/mcp/resourceMapping';
import { realResolvers } from '../integrations/mcp/resolvers';
import { createLedger } from '../createLedger';
import type { PolicyTool } from './checkPolicy';
import type { PolicyCase } from './policyCases';

export interface CaseResult {
  /** 0-based position in the cases file. */
  readonly index: number;
  readonly name?: string;
  readonly tool: string;
  readonly at: number;
  readonly expected: string;
  readonly actual: string;
  readonly ok: boolean;
}

export interface RunCasesResult {
  readonly results: readonly CaseResult[];
  /** Tools that could not be registered (a bad name, listed twice), with why. */
  readonly skippedTools: readonly { readonly name: string; readonly why: string }[];
}

// `additionalProperties: true` said outright: the ledger refuses properties a schema does not declare.
const anyArguments: JsonObject = { type: 'object', additionalProperties: true };

/**
 * Decides sample calls under a policy in a scratch in-memory ledger: the tools registered with
 * their schemas (`tools`; undefined: the policy's and the cases' tools, each taking any arguments
 * object), bodies that run nothing, the grant issued at the earliest case time, each case decided
 * in order with its `at` (else `now`) as the clock. Resources are mapped by the policy's templates
 * as `atc proxy` maps them (fs: paths resolved on this machine). Throws if the policy cannot be issued.
 */
export async function runPolicyCases(policy: Policy, tools: readonly PolicyTool[] | undefined, cases: readonly PolicyCase[], options: { readonly now: number }): Promise<RunCasesResult> {
  const times = cases.map((c) => c.at ?? options.now);
  // Times never go back (parsePolicyCases), so the first case's is the earliest.
  let clock = times[0] ?? options.now;
  const ledger = createLedger({ clock: () => clock, setTimer: () => () => undefined });
  const mapping = new ResourceMapping(realResolvers);
  const skippedTools: { name: string; why: string }[] = [];
  try {
    const registered = tools ?? [...new Set([...policy.tools, ...cases.map((c) => c.tool)])].map((name) => ({ name, inputSchema: anyArguments }));
    const seen = new Set<string>();
    for (const tool of registered) {
      if (seen.has(tool.name)) continue;
      seen.add(tool.name);
      try {
        await ledger.registerTool({ name: tool.name, inputSchema: tool.inputSchema, resources: (args) => mapping.resources(tool.name, args), run: () => null });
      } catch (error) {
        skippedTools.push({ name: tool.name, why: (error as Error).message });
      }
    }
    const { token } = await ledger.issue(policyIssueOptions(policy, clock));
    mapping.use(policy.resources ?? {}, policy.fsBase);
    const results: CaseResult[] = [];
    for (const [index, c] of cases.entries()) {
      clock = times[index] as number;
      const outcome = await ledger.invoke(token, c.tool, c.args);
      const actual = outcome.status === 'rejected' ? outcome.reason : 'admitted';
      results.push({ index, ...(c.name !== undefined ? { name: c.name } : {}), tool: c.tool, at: clock, expected: c.expect, actual, ok: actual === c.expect });
    }
    return { results, skippedTools };
  } finally {
    await ledger.close();
  }
}

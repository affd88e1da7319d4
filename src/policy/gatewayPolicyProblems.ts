import { checkPolicy, type PolicyProblem, type PolicyProblemCode, type PolicyTool } from './checkPolicy';
import { pointer } from './pointer';

/**
 * How bad a problem is for a gateway about to start. An error: the policy cannot be issued as written
 * (malformed, a narrowing that does not compile or names an undeclared property), names a tool or
 * argument the tools do not have, binds a tool by no scope, or is already expired: the gateway
 * refuses to start. A warning: the policy is issued and fails closed, but part of it has no effect
 * (a scope no template reaches) or it refuses every call (a budget of 0: a deny-all may be meant):
 * the gateway starts and says so.
 */
export type ProblemLevel = 'error' | 'warning';

const warnings: ReadonlySet<PolicyProblemCode> = new Set<PolicyProblemCode>(['unreachable_scope', 'zero_budget']);

export function problemLevel(code: PolicyProblemCode): ProblemLevel {
  return warnings.has(code) ? 'warning' : 'error';
}

/** A problem of one policy in a gateway config, its pointer into the config (`/policies/<name>/…`). */
export interface GatewayPolicyProblem extends PolicyProblem {
  readonly policy: string;
  readonly level: ProblemLevel;
}

/**
 * Every policy of a gateway config (by name, each a plain value or a parsed policy) checked against
 * the tools under their gateway names, as `atc policy check` checks one policy file. Never throws.
 */
export function gatewayPolicyProblems(policies: Iterable<readonly [string, unknown]>, tools: readonly PolicyTool[] | undefined, now: number): GatewayPolicyProblem[] {
  const problems: GatewayPolicyProblem[] = [];
  for (const [name, policy] of policies) {
    for (const problem of checkPolicy(policy, tools, { now })) {
      problems.push({ ...problem, pointer: pointer('policies', name) + problem.pointer, policy: name, level: problemLevel(problem.code) });
    }
  }
  return problems;
}

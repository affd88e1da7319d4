import type { Ledger } from '../../stream/types';
import { gatewayPolicyProblems, type GatewayPolicyProblem } from '../../policy/gatewayPolicyProblems';
import { PolicyError, registeredSchemas } from '../mcp/policy';
import { checkPolicyPaths } from '../mcp/policyPaths';
import { printable } from '../../text/printable';
import { GatewayConfigError, type GatewayConfig } from './config';

export interface GatewayPolicyCheckOptions {
  /** ms since epoch: what "already past" means for a policy's `expiresAt`. Default Date.now(). */
  readonly now?: number;
  /** Where warnings go (one line each); the gateway's report. */
  readonly report?: (line: string) => void;
}

/** The gateway refuses to start: every error-level problem of its policies, one per line. */
export class GatewayPolicyError extends GatewayConfigError {
  constructor(readonly problems: readonly GatewayPolicyProblem[]) {
    super('policies', `${problems.length} error(s) (atc policy check --gateway <config> lists every problem):\n${problems.map(problemLine).join('\n')}`);
  }
}

/** One problem as a line: the JSON Pointer into the config file, level, code and message; printable. */
export function problemLine(problem: GatewayPolicyProblem): string {
  return printable(`  #${problem.pointer} ${problem.level} ${problem.code}: ${problem.message}`);
}

/**
 * Every policy of the config, once the upstreams are registered, through the same lint as `atc
 * policy check --gateway` against the tools the log holds (by gateway name), and `fsBase` and `fs:`
 * scopes against the disk: an error-level problem fails the start before any principal is issued a
 * grant (all of them listed); warnings are reported and the gateway starts.
 */
export function checkGatewayPolicies(config: Pick<GatewayConfig, 'policies'>, ledger: Ledger, options: GatewayPolicyCheckOptions = {}): void {
  for (const [name, policy] of config.policies) {
    try {
      checkPolicyPaths(policy);
    } catch (error) {
      if (!(error instanceof PolicyError)) throw error;
      throw new GatewayConfigError(`policies.${name}.${error.field}`, error.message.slice(`policy ${error.field}: `.length));
    }
  }
  const tools = Array.from(registeredSchemas(ledger), ([name, inputSchema]) => ({ name, inputSchema }));
  const problems = gatewayPolicyProblems(config.policies, tools, options.now ?? Date.now());
  for (const warning of problems.filter((p) => p.level === 'warning')) options.report?.(`policy warning:${problemLine(warning).slice(1)}`);
  const errors = problems.filter((p) => p.level === 'error');
  if (errors.length > 0) throw new GatewayPolicyError(errors);
}

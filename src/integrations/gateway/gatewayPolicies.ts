import type { Ledger } from '../../stream/types';
import { checkPolicyTools, PolicyError, registeredSchemas } from '../mcp/policy';
import { checkPolicyPaths } from '../mcp/policyPaths';
import { GatewayConfigError, type GatewayConfig } from './config';

/**
 * Every policy of the config against the tools the log holds once the upstreams are registered
 * (tools by gateway name, templates naming declared arguments, fsBase a real directory): a wrong
 * one fails the start, naming `policies.<name>.<field>`, before any principal is issued a grant.
 */
export function checkGatewayPolicies(config: Pick<GatewayConfig, 'policies'>, ledger: Ledger): void {
  const schemas = registeredSchemas(ledger);
  for (const [name, policy] of config.policies) {
    try {
      checkPolicyPaths(policy);
      checkPolicyTools(policy, schemas);
    } catch (error) {
      if (!(error instanceof PolicyError)) throw error;
      throw new GatewayConfigError(`policies.${name}.${error.field}`, error.message.slice(`policy ${error.field}: `.length));
    }
  }
}

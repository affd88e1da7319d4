import { latestPrincipalGrant } from '../../domain/principals';
import { InvalidCommandError } from '../../stream/invalidCommandError';
import type { Ledger } from '../../stream/types';
import { policyIssueOptions, type Policy } from '../mcp/policy';
import type { GatewayConfig } from './config';

export type PrincipalGrant = { readonly ok: true; readonly grantId: string } | { readonly ok: false; readonly description: string };

/** The policy name the config maps a principal to (`"*"` for anyone else), or undefined: refused. */
export function policyNameOf(config: Pick<GatewayConfig, 'principals'>, principal: string): string | undefined {
  return config.principals.get(principal) ?? config.principals.get('*');
}

/**
 * The root grant a principal acts with: its grant for its policy when one is active (the same one
 * for every session, across restarts: budgets never reset); a new one from the policy when it has
 * none yet or its last one expired; refused while its last one is revoked (the host re-enables it
 * with `atc principals enable`). Two processes issuing at once: the decider keeps one, the other
 * finds it on the retry.
 */
export async function principalGrant(ledger: Ledger, config: Pick<GatewayConfig, 'principals' | 'policies'>, principal: string, now: number): Promise<PrincipalGrant> {
  const policyName = policyNameOf(config, principal);
  const policy = policyName === undefined ? undefined : config.policies.get(policyName);
  if (policyName === undefined || policy === undefined) return { ok: false, description: 'this principal is not admitted by the gateway config' };
  for (let attempt = 0; attempt < 3; attempt++) {
    const latest = latestPrincipalGrant(ledger.state(), principal, policyName);
    if (latest !== undefined && latest.grant.revoked) return { ok: false, description: 'this principal is revoked until the host re-enables it' };
    if (latest !== undefined && now < latest.grant.scope.expiresAt) return { ok: true, grantId: latest.grant.grantId };
    try {
      return { ok: true, grantId: await issuePrincipalGrant(ledger, principal, policyName, policy, now) };
    } catch (error) {
      if (!(error instanceof InvalidCommandError)) throw error;
      // Another process (or session) issued this generation first: look again.
    }
  }
  return { ok: false, description: 'the principal grant could not be issued' };
}

/** Issues the principal's next grant for the policy (the host's re-enable does the same). */
export async function issuePrincipalGrant(ledger: Ledger, principal: string, policyName: string, policy: Policy, now: number): Promise<string> {
  const { grantId } = await ledger.issue({ ...policyIssueOptions(policy, now), principal: { name: principal, policy: policyName } });
  return grantId;
}

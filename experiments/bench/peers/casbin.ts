import { newEnforcer, newModelFromString, StringAdapter } from 'casbin';
import { canonicalJson } from '../../../src';
import { policy, type ReadArgs } from '../policy';
import { counters } from './budgets';

// ABAC on the request: subject, tool, path under the policy's prefix (keyMatch), length limit.
const model = `
[request_definition]
r = sub, act, path, len

[policy_definition]
p = sub, act, obj

[policy_effect]
e = some(where (p.eft == allow))

[matchers]
m = r.sub == p.sub && r.act == p.act && keyMatch(r.path, p.obj) && r.len <= ${policy.lengthMax}
`;

/**
 * casbin with `policies` policy lines (the agent's own line last, so a miss scans them all, as
 * the worst case a user with that many lines meets) and two counters for the budgets.
 */
export async function casbinPeer(policies: number): Promise<{ call(agent: string, args: ReadArgs): boolean }> {
  const lines: string[] = [];
  for (let i = 0; i < policies - 1; i++) lines.push(`p, agent-${i}, tool-${i % 50}, other-${i}/*`);
  lines.push(`p, agent, ${policy.tool}, ${policy.pathPrefix}*`);
  const enforcer = await newEnforcer(newModelFromString(model), new StringAdapter(lines.join('\n')));
  const budgets = counters(policy.callsBudget, policy.bytesBudget);
  return {
    call(agent, args) {
      if (!enforcer.enforceSync(agent, policy.tool, args.path, args.length)) return false;
      return budgets.take(agent, Buffer.byteLength(canonicalJson(args), 'utf8'));
    },
  };
}

import * as cedar from '@cedar-policy/cedar-wasm/nodejs';
import { canonicalJson } from '../../../src';
import { policy, type ReadArgs } from '../policy';
import { counters } from './budgets';

const policyText = `permit(principal == Agent::"agent", action == Action::"call", resource == Tool::"${policy.tool}")
when { context.path like "${policy.pathPrefix}*" && context.length <= ${policy.lengthMax} };`;

/** AWS Cedar (Rust → WebAssembly), policies pre-parsed once, and two counters for the budgets. */
export function cedarPeer(): { call(agent: string, args: ReadArgs): boolean } {
  const parsed = cedar.preparsePolicySet('bench', { staticPolicies: policyText });
  if (parsed.type !== 'success') throw new Error(`cedar policy did not parse: ${JSON.stringify(parsed)}`);
  const budgets = counters(policy.callsBudget, policy.bytesBudget);
  return {
    call(agent, args) {
      const answer = cedar.statefulIsAuthorized({
        principal: { type: 'Agent', id: agent },
        action: { type: 'Action', id: 'call' },
        resource: { type: 'Tool', id: policy.tool },
        context: { path: args.path, length: args.length },
        preparsedPolicySetId: 'bench',
        entities: [],
      });
      if (answer.type !== 'success' || answer.response.decision !== 'allow') return false;
      return budgets.take(agent, Buffer.byteLength(canonicalJson(args), 'utf8'));
    },
  };
}

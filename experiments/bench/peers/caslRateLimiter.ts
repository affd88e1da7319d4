import { AbilityBuilder, createMongoAbility, subject, type MongoAbility } from '@casl/ability';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { canonicalJson } from '../../../src';
import { policy, type ReadArgs } from '../policy';

/**
 * @casl/ability for the rule (mongo-style conditions on the call's arguments) and two
 * rate-limiter-flexible limiters for the budgets (calls, input bytes), as a user would combine them.
 */
export function caslRateLimiter(): { call(agent: string, args: ReadArgs): Promise<boolean> } {
  const { can, build } = new AbilityBuilder<MongoAbility>(createMongoAbility);
  can('call', policy.tool, { path: { $regex: `^${policy.pathPrefix}` }, length: { $lte: policy.lengthMax } });
  const ability = build();
  // duration 0: points never reset, i.e. a budget rather than a rate.
  const calls = new RateLimiterMemory({ points: policy.callsBudget, duration: 0 });
  const bytes = new RateLimiterMemory({ points: policy.bytesBudget, duration: 0 });
  return {
    async call(agent, args) {
      if (!ability.can('call', subject(policy.tool, { ...args }))) return false;
      const size = Buffer.byteLength(canonicalJson(args), 'utf8');
      try {
        await calls.consume(agent, 1);
        await bytes.consume(agent, size);
        return true;
      } catch {
        return false;
      }
    },
  };
}

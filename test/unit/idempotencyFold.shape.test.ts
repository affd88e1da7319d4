import type { Command } from '../../src/domain/commands';
import { bindingsDepth, isByGrant } from '../../src/domain/idempotency';
import { shardGet } from '../../src/domain/shardedMap';
import type { DigestBindings, LedgerState } from '../../src/domain/state';
import { given, T0 } from '../support/given';

// One key digest bound on several grants is kept as a map by grant with its count; as evictions
// take bindings away it goes back to a lone binding at one, so equal bindings have one shape
// whatever their history (idempotencyFold.ts, withBinding / withoutCall).

const keyDigest = 'k'.repeat(64);
const register: Command = { type: 'registerTool', at: T0, tool: 't', inputSchema: { type: 'object' } };
const issue = (grantId: string): Command => ({
  type: 'issue', at: T0, grantId, tokenDigest: grantId.padStart(64, 'a'),
  scope: { tools: ['t'], args: {}, resources: [], notBefore: T0, expiresAt: T0 + 1e9, budget: { calls: 10, inputBytes: 100 } },
});
const admit = (grantId: string, callId: string, at: number, key: string): Command => ({
  type: 'admit', at, callId, grantId, tool: 't', inputBytes: 1, argumentCheck: 'ok', resourceCheck: 'ok',
  idempotency: { keyDigest: key, argsDigest: 'a'.repeat(64), expiresAt: at + 10, keysMax: 10 },
});
const boundOn = (state: LedgerState): DigestBindings | undefined => shardGet(state.idempotencyBindings, keyDigest, bindingsDepth);
const setUp: Command[] = [register, issue('g1'), issue('g2'), issue('g3'), admit('g1', 'c1', T0 + 1, keyDigest), admit('g2', 'c2', T0 + 2, keyDigest), admit('g3', 'c3', T0 + 3, keyDigest)];

describe('a key digest bound on several grants', () => {
  it('counts the grants it is bound on', () => {
    const bound = boundOn(given(...setUp).state);
    expect(bound !== undefined && isByGrant(bound) ? bound.count : undefined).toBe(3);
  });

  it('counts one grant fewer once one binding is evicted', () => {
    // g1's next keyed call (another key) evicts g1's expired binding from its tree's queue.
    const bound = boundOn(given(...setUp, admit('g1', 'c4', T0 + 20, 'm'.repeat(64))).state);
    expect(bound !== undefined && isByGrant(bound) ? bound.count : undefined).toBe(2);
  });

  it('goes back to a lone binding when one grant is left', () => {
    const { state } = given(...setUp, admit('g1', 'c4', T0 + 20, 'm'.repeat(64)), admit('g2', 'c5', T0 + 21, 'm'.repeat(64)));
    const bound = boundOn(state);
    expect(bound !== undefined && !isByGrant(bound) ? { grantId: bound.grantId, callId: bound.callId } : bound).toEqual({ grantId: 'g3', callId: 'c3' });
  });
});

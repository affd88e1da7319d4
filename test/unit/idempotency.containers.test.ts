import type { Command } from '../../src/domain/commands';
import { bindingsDepth, isByGrant, keyContainersCurrent } from '../../src/domain/idempotency';
import { shardGet, shardWith } from '../../src/domain/shardedMap';
import type { DigestBindings, GrantRecord, KeyBinding, KeyQueue, LedgerState } from '../../src/domain/state';
import { given, T0 } from '../support/given';

// keyContainersCurrent: whether a snapshot's key containers have today's shape (every binding names
// its keyDigest, every queue entry is a binding). The stores skip a snapshot for which it is false.

const keyDigest = 'k'.repeat(64);
const register: Command = { type: 'registerTool', at: T0, tool: 't', inputSchema: { type: 'object' } };
const issue = (grantId: string): Command => ({
  type: 'issue', at: T0, grantId, tokenDigest: grantId.padStart(64, 'a'),
  scope: { tools: ['t'], args: {}, resources: [], notBefore: T0, expiresAt: T0 + 1e9, budget: { calls: 10, inputBytes: 100 } },
});
const admit = (grantId: string, callId: string): Command => ({
  type: 'admit', at: T0 + 1, callId, grantId, tool: 't', inputBytes: 1, argumentCheck: 'ok', resourceCheck: 'ok',
  idempotency: { keyDigest, argsDigest: 'a'.repeat(64), expiresAt: T0 + 100, keysMax: 10 },
});
/** g1 and g2 both bound `keyDigest`; g3 has no keyed call (no queue). */
const state = given(register, issue('g1'), issue('g2'), issue('g3'), admit('g1', 'c1'), admit('g2', 'c2')).state;
const bound = shardGet(state.idempotencyBindings, keyDigest, bindingsDepth) as DigestBindings;
const grant = shardGet(state.grants, 'g1') as GrantRecord;
const queue = grant.keyQueue as KeyQueue;
const lone = isByGrant(bound) ? (shardGet(bound.byGrant, 'g1') as KeyBinding) : bound;
const { keyDigest: _dropped, ...withoutDigest } = lone;

const withBound = (value: unknown): LedgerState => ({ ...state, idempotencyBindings: shardWith(state.idempotencyBindings, keyDigest, value as DigestBindings, bindingsDepth) });
const withQueue = (value: unknown): LedgerState => ({ ...state, grants: shardWith(state.grants, 'g1', { ...grant, keyQueue: value as KeyQueue }) });

describe('keyContainersCurrent', () => {
  it('accepts a state the folds make: a key bound on two grants, a grant without a queue', () => {
    expect(isByGrant(bound)).toBe(true);
    expect(keyContainersCurrent(state)).toBe(true);
  });

  it('accepts a lone binding that names its key digest', () => {
    expect(keyContainersCurrent(withBound(lone))).toBe(true);
  });

  it.each<[string, unknown]>([
    ['a lone binding without its key digest', withoutDigest],
    ['a lone binding whose key digest is not a string', { ...lone, keyDigest: 7 }],
    ['a lone binding that is null', null],
    ['a binding by grant without its key digest', isByGrant(bound) ? { ...bound, byGrant: shardWith(bound.byGrant, 'g2', withoutDigest) } : undefined],
  ])('refuses %s', (_label, value) => {
    expect(keyContainersCurrent(withBound(value))).toBe(false);
  });

  it.each<[string, unknown]>([
    ['a queue tail holding flat slots (the shape before perf14)', { ...queue, tail: [keyDigest, 'g1', 'c1', T0 + 100] }],
    ['a queue chunk holding something that is not a binding', { ...queue, chunks: [['x']], tail: [] }],
    ['a queue whose chunks are not a list (it would throw)', { ...queue, chunks: null }],
  ])('refuses %s', (_label, value) => {
    expect(keyContainersCurrent(withQueue(value))).toBe(false);
  });
});

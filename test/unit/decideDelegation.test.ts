import type { Command, Narrowing } from '../../src/domain/commands';
import { limits } from '../../src/domain/limits';
import { shardGet } from '../../src/domain/shardedMap';
import { admit, given, issueCommand, payloads, registerNotes, registerRead, T0 } from '../support/given';

const attenuate = (narrowing: Narrowing, overrides: Partial<Extract<Command, { type: 'attenuate' }>> = {}): Command => ({
  type: 'attenuate',
  at: T0 + 1,
  parentGrantId: 'g1',
  grantId: 'c1',
  tokenDigest: 'c'.repeat(64),
  request: { kind: 'narrowing', narrowing },
  ...overrides,
});
const revoke = (grantId: string): Command => ({ type: 'revoke', at: T0, grantId, abortInFlight: false });
const root = issueCommand({ tools: ['notes.write', 'notes.read'], budget: { calls: 5, inputBytes: 100 } });

describe('decide: attenuate', () => {
  it("issues a child with the parent's scope by default and what the chain has left as its budget", () => {
    const [event] = payloads(given(registerNotes, registerRead, root, admit({ callId: 'x' })).when(attenuate({})));
    expect(event).toEqual({
      type: 'grant.issued',
      grantId: 'c1',
      tokenDigest: 'c'.repeat(64),
      parentGrantId: 'g1',
      parentLeft: { calls: 4, inputBytes: 90 },
      scope: { tools: ['notes.write', 'notes.read'], args: {}, resources: ['notes:/drafts/'], notBefore: T0, expiresAt: T0 + 60_000, budget: { calls: 4, inputBytes: 90 } },
    });
  });

  it("takes what is left as the least over the whole chain, not the parent's alone", () => {
    const state = given(registerNotes, registerRead, root, attenuate({ budget: { calls: 3 } }), admit({ callId: 'x', grantId: 'c1' }));
    const [event] = payloads(state.when(attenuate({}, { parentGrantId: 'c1', grantId: 'c2', tokenDigest: 'd'.repeat(64) })));
    expect(event).toMatchObject({ type: 'grant.issued', parentLeft: { calls: 2, inputBytes: 90 } });
  });

  // One row per refusal, in precedence order; each row fails exactly one check.
  const rows: [string, () => ReturnType<ReturnType<typeof given>['when']>][] = [
    ['unknown_token', () => given(registerNotes, registerRead, root).when(attenuate({}, { parentGrantId: undefined }))],
    ['revoked', () => given(registerNotes, registerRead, root, revoke('g1')).when(attenuate({ budget: { calls: 99 } }))],
    ['not_yet_valid', () => given(registerNotes, issueCommand({ notBefore: T0 + 10 })).when(attenuate({}))],
    ['expired', () => given(registerNotes, registerRead, root).when(attenuate({}, { at: T0 + 60_000 }))],
    ['attenuation_invalid', () => given(registerNotes, registerRead, root).when(attenuate({}, { request: { kind: 'invalid' } }))],
    ['attenuation_invalid', () => given(registerNotes, registerRead, root).when(attenuate({ tools: ['notes.read'], args: { 'notes.write': {} } }))],
    ['attenuation_invalid', () => given(registerNotes, registerRead, root).when(attenuate({ resources: ['notes:/a/../b'] }))],
    ['attenuation_widens', () => given(registerNotes, registerRead, issueCommand()).when(attenuate({ tools: ['notes.read'] }))],
    ['attenuation_widens', () => given(registerNotes, registerRead, root).when(attenuate({ resources: ['notes:/'] }))],
    ['attenuation_widens', () => given(registerNotes, registerRead, root).when(attenuate({ notBefore: T0 - 1 }))],
    ['attenuation_widens', () => given(registerNotes, registerRead, root).when(attenuate({ expiresAt: T0 + 60_001 }))],
    ['attenuation_widens', () => given(registerNotes, registerRead, root).when(attenuate({ budget: { calls: 6 } }))],
    ['attenuation_widens', () => given(registerNotes, registerRead, root).when(attenuate({ budget: { inputBytes: 101 } }))],
  ];
  it.each(rows)('refuses %s, logging one attenuation.rejected', (reason, run) => {
    const events = payloads(run());
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'attenuation.rejected', reason });
  });

  it('refuses a parent at the depth bound as widening', () => {
    const chain: Command[] = [registerNotes, registerRead, root];
    for (let d = 1; d <= 8; d++) chain.push(attenuate({}, { parentGrantId: d === 1 ? 'g1' : `c${d - 1}`, grantId: `c${d}`, tokenDigest: String(d).repeat(64) }));
    const [event] = payloads(given(...chain).when(attenuate({}, { parentGrantId: 'c8', grantId: 'c9', tokenDigest: '9'.repeat(64) })));
    expect(event).toMatchObject({ type: 'attenuation.rejected', reason: 'attenuation_widens', parentGrantId: 'c8' });
  });
});

describe('decide: the bound on grants below one root', () => {
  it(`counts every grant issued below a root, at any depth, and refuses the one past limits.delegatedGrantsPerRootMax`, () => {
    const max = limits.delegatedGrantsPerRootMax;
    const commands: Command[] = [registerNotes, registerRead, root, attenuate({})];
    for (let i = 1; i < max; i++) commands.push(attenuate({}, { parentGrantId: 'c1', grantId: `c1_${i}`, tokenDigest: 'd' + i.toString(16).padStart(63, '0') }));
    const state = given(...commands);
    expect(shardGet(state.state.grants, 'g1')?.descendants).toBe(max);
    expect(shardGet(state.state.grants, 'c1')?.descendants).toBeUndefined();
    const [event] = payloads(state.when(attenuate({}, { parentGrantId: 'c1', grantId: 'c_over', tokenDigest: 'f'.repeat(64) })));
    expect(event).toMatchObject({ type: 'attenuation.rejected', reason: 'attenuation_widens' });
    const other = given(registerNotes, registerRead, root, issueCommand({}, 'g2'));
    expect(payloads(other.when(attenuate({}, { parentGrantId: 'g2' })))[0]).toMatchObject({ type: 'grant.issued' });
  });
});

describe('decide: calls and revocations in a chain', () => {
  const tree = (): Command[] => [registerNotes, registerRead, root, attenuate({ budget: { calls: 5 } }), attenuate({}, { parentGrantId: 'c1', grantId: 'c2', tokenDigest: 'd'.repeat(64) })];

  it('admits a grandchild call naming its ancestors root first', () => {
    const [event] = payloads(given(...tree()).when(admit({ grantId: 'c2' })));
    expect(event).toEqual({ type: 'call.admitted', callId: 'c1', grantId: 'c2', tool: 'notes.write', reserved: { calls: 1, inputBytes: 10 }, ancestors: ['g1', 'c1'] });
  });

  it('refuses a grandchild call as revoked once the root is revoked', () => {
    const [event] = payloads(given(...tree(), revoke('g1')).when(admit({ grantId: 'c2' })));
    expect(event).toMatchObject({ type: 'call.rejected', reason: 'revoked', grantId: 'c2' });
  });

  it("refuses a call when the root's budget is spent by a sibling's calls", () => {
    const spent: Command[] = [];
    for (let i = 0; i < 5; i++) spent.push(admit({ callId: `s${i}`, grantId: 'c1', inputBytes: 1 }));
    const [event] = payloads(given(...tree(), ...spent).when(admit({ grantId: 'c2', inputBytes: 1 })));
    expect(event).toMatchObject({ type: 'call.rejected', reason: 'call_budget_exhausted' });
  });

  it('revokeDelegation: grants a revocation strictly below, with revokedBy; refuses anything else as not_a_descendant', () => {
    const state = given(...tree());
    const by = (byGrantId: string | undefined, grantId: string | undefined): Command => ({ type: 'revokeDelegation', at: T0 + 1, byGrantId, grantId, abortInFlight: true });
    expect(payloads(state.when(by('g1', 'c2')))).toEqual([{ type: 'grant.revoked', grantId: 'c2', abortInFlight: true, revokedBy: 'g1' }]);
    expect(payloads(state.when(by('c1', 'c1')))).toEqual([{ type: 'revocation.rejected', reason: 'not_a_descendant', revokedBy: 'c1', grantId: 'c1' }]);
    expect(payloads(state.when(by('c2', 'g1')))).toEqual([{ type: 'revocation.rejected', reason: 'not_a_descendant', revokedBy: 'c2', grantId: 'g1' }]);
    expect(payloads(state.when(by('c1', 'nope')))).toEqual([{ type: 'revocation.rejected', reason: 'not_a_descendant', revokedBy: 'c1' }]);
    expect(payloads(state.when(by(undefined, 'c2')))).toEqual([{ type: 'revocation.rejected', reason: 'unknown_token', grantId: 'c2' }]);
    expect(payloads(given(...tree(), revoke('c2')).when(by('g1', 'c2')))).toEqual([]);
  });
});

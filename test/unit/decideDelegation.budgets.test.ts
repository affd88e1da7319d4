import type { Command, Narrowing } from '../../src/domain/commands';
import type { EventPayload } from '../../src/domain/events';
import { budgetLeft } from '../../src/domain/decideDelegation';
import { given, issueCommand, payloads, registerNotes, registerRead, T0 } from '../support/given';
import { grantRecord } from '../support/grantRecord';

// Attenuation with meters, rate windows and call timeouts, and the refusals the first suite does not
// reach; one rule per test, every state built in the test.
const attenuate = (narrowing: Narrowing, over: Partial<Extract<Command, { type: 'attenuate' }>> = {}): Command => ({
  type: 'attenuate', at: T0 + 1, parentGrantId: 'g1', grantId: 'c1', tokenDigest: 'c'.repeat(64), request: { kind: 'narrowing', narrowing }, ...over,
});
const root = (over: Parameters<typeof issueCommand>[0] = {}) => issueCommand({ tools: ['notes.write', 'notes.read'], budget: { calls: 5, inputBytes: 100 }, ...over });
const one = (commands: Command[], command: Command): EventPayload => {
  const events = payloads(given(...commands).when(command));
  expect(events).toHaveLength(1);
  return events[0] as EventPayload;
};
const base = (): Command[] => [registerNotes, registerRead];

describe('budgetLeft', () => {
  it('is limit minus used, the least over the chain, never below zero', () => {
    const grant = grantRecord({ budget: { calls: 10, inputBytes: 100 }, used: { calls: 2, inputBytes: 30 } });
    expect(budgetLeft(grant, [])).toEqual({ calls: 8, inputBytes: 70 });
    const tight = grantRecord({ budget: { calls: 3, inputBytes: 1_000 }, used: { calls: 1, inputBytes: 0 } });
    const bytes = grantRecord({ budget: { calls: 100, inputBytes: 50 }, used: { calls: 0, inputBytes: 45 } });
    expect(budgetLeft(grant, [tight, bytes])).toEqual({ calls: 2, inputBytes: 5 });
    expect(budgetLeft(grantRecord({ budget: { calls: 1, inputBytes: 1 }, used: { calls: 2, inputBytes: 3 } }), [])).toEqual({ calls: 0, inputBytes: 0 });
  });

  it('adds the meters the chain caps, only when some grant caps one', () => {
    expect(budgetLeft(grantRecord({ budget: { meters: { usd: 9 } }, metersUsed: { usd: 2 } }), [])).toEqual({ calls: 10, inputBytes: 1_000, meters: { usd: 7 } });
    expect(budgetLeft(grantRecord(), [])).not.toHaveProperty('meters');
  });
});

describe('attenuate: meters', () => {
  const metered = () => root({ budget: { calls: 5, inputBytes: 100, meters: { usd: 10 } } });

  it('gives a child the meters its chain has left by default', () => {
    expect(one([...base(), metered()], attenuate({}))).toMatchObject({ type: 'grant.issued', scope: { budget: { calls: 5, inputBytes: 100, meters: { usd: 10 } } }, parentLeft: { meters: { usd: 10 } } });
  });

  it('lets a child ask for less of a meter, or a meter the chain does not cap', () => {
    expect(one([...base(), metered()], attenuate({ budget: { meters: { usd: 10, tokens: 3 } } }))).toMatchObject({ scope: { budget: { meters: { tokens: 3, usd: 10 } } } });
  });

  it('refuses a child asking for more of a meter than the chain has left', () => {
    expect(one([...base(), metered()], attenuate({ budget: { meters: { usd: 11 } } }))).toEqual({ type: 'attenuation.rejected', reason: 'attenuation_widens', parentGrantId: 'g1' });
  });
});

describe('attenuate: rate windows', () => {
  it('gives a child no rate window of its own unless it asks for one', () => {
    const rated = root({ budget: { calls: 5, inputBytes: 100, rate: { calls: 2, windowMs: 100 } } });
    const event = one([...base(), rated], attenuate({}));
    expect(event.type === 'grant.issued' && event.scope.budget).toEqual({ calls: 5, inputBytes: 100 });
    expect(one([...base(), rated], attenuate({ budget: { rate: { calls: 1, windowMs: 50 } } }))).toMatchObject({ scope: { budget: { rate: { calls: 1, windowMs: 50 } } } });
  });

  it('keeps both a requested rate window and the chain’s meters', () => {
    const both = root({ budget: { calls: 5, inputBytes: 100, meters: { usd: 4 } } });
    expect(one([...base(), both], attenuate({ budget: { rate: { calls: 1, windowMs: 50 } } }))).toMatchObject({ scope: { budget: { meters: { usd: 4 }, rate: { calls: 1, windowMs: 50 } } } });
  });
});

describe('attenuate: call timeouts', () => {
  it('inherits the parent’s callTimeoutMs', () => {
    expect(one([...base(), root({ callTimeoutMs: 100 })], attenuate({}))).toMatchObject({ scope: { callTimeoutMs: 100 } });
  });

  it('lets a child shorten the timeout, or set one under a parent without', () => {
    expect(one([...base(), root({ callTimeoutMs: 100 })], attenuate({ callTimeoutMs: 100 }))).toMatchObject({ type: 'grant.issued', scope: { callTimeoutMs: 100 } });
    expect(one([...base(), root({ callTimeoutMs: 100 })], attenuate({ callTimeoutMs: 99 }))).toMatchObject({ type: 'grant.issued', scope: { callTimeoutMs: 99 } });
    expect(one([...base(), root()], attenuate({ callTimeoutMs: 5_000 }))).toMatchObject({ type: 'grant.issued', scope: { callTimeoutMs: 5_000 } });
  });

  it('refuses a child lengthening its parent’s timeout', () => {
    expect(one([...base(), root({ callTimeoutMs: 100 })], attenuate({ callTimeoutMs: 101 }))).toMatchObject({ type: 'attenuation.rejected', reason: 'attenuation_widens' });
  });

  it('issues a child of a parent without a timeout without one', () => {
    expect(one([...base(), root()], attenuate({}))).not.toHaveProperty('scope.callTimeoutMs');
  });
});

describe('attenuate: refusals', () => {
  it('refuses a request an agent sent as widening before reading it', () => {
    expect(one([...base(), root()], attenuate({}, { request: { kind: 'widens' } }))).toEqual({ type: 'attenuation.rejected', reason: 'attenuation_widens', parentGrantId: 'g1' });
  });

  it('refuses a child grant id or token digest already issued', () => {
    expect(given(...base(), root()).when(attenuate({}, { grantId: 'g1' }))).toMatchObject({ ok: false, code: 'duplicate_grant', message: 'grant id already issued' });
    const [issued] = given(...base(), root()).events.filter((e) => e.type === 'grant.issued');
    const digest = issued?.type === 'grant.issued' ? issued.tokenDigest : '';
    expect(given(...base(), root()).when(attenuate({}, { tokenDigest: digest }))).toMatchObject({ ok: false, code: 'duplicate_grant', message: 'token digest already issued' });
  });

  it('names no parent on a refusal for an unknown parent', () => {
    expect(one([...base(), root()], attenuate({}, { parentGrantId: 'nope' }))).toEqual({ type: 'attenuation.rejected', reason: 'unknown_token' });
  });

  it('refuses a resource the parent’s scopes do not cover, and accepts one they do', () => {
    expect(one([...base(), root()], attenuate({ resources: ['notes:/other/'] }))).toMatchObject({ reason: 'attenuation_widens' });
    expect(one([...base(), root()], attenuate({ resources: ['notes:/drafts/a/'] }))).toMatchObject({ type: 'grant.issued', scope: { resources: ['notes:/drafts/a/'] } });
  });

  it('keeps the child’s own narrowing schemas and the requested window', () => {
    const n = { properties: { path: { maxLength: 5 } } };
    expect(one([...base(), root()], attenuate({ args: { 'notes.write': n }, notBefore: T0 + 5, expiresAt: T0 + 50 }))).toMatchObject({ scope: { args: { 'notes.write': n }, notBefore: T0 + 5, expiresAt: T0 + 50 } });
  });
});

describe('revokeDelegation: refusals', () => {
  it('refuses a revocation by a revoked grant as revoked, naming it and the target', () => {
    const commands: Command[] = [...base(), root(), attenuate({}), attenuate({}, { parentGrantId: 'c1', grantId: 'c2', tokenDigest: 'd'.repeat(64) }), { type: 'revoke', at: T0 + 1, grantId: 'c1', abortInFlight: false }];
    expect(one(commands, { type: 'revokeDelegation', at: T0 + 2, byGrantId: 'c1', grantId: 'c2', abortInFlight: false })).toEqual({ type: 'revocation.rejected', reason: 'revoked', revokedBy: 'c1', grantId: 'c2' });
  });

  it('refuses a revocation that names no target', () => {
    expect(one([...base(), root()], { type: 'revokeDelegation', at: T0 + 2, byGrantId: 'g1', grantId: undefined, abortInFlight: false })).toEqual({ type: 'revocation.rejected', reason: 'not_a_descendant', revokedBy: 'g1' });
  });
});

describe('attenuate: a child’s budget and refusals carry only the fields that apply', () => {
  const budgetOf = (event: EventPayload) => (event.type === 'grant.issued' ? event.scope.budget : undefined);

  it('gives a plain child’s budget neither meters nor a rate window', () => {
    expect(budgetOf(one([...base(), root()], attenuate({})))).toStrictEqual({ calls: 5, inputBytes: 100 });
  });
  it('gives a metered child’s budget no rate window field', () => {
    const metered = root({ budget: { calls: 5, inputBytes: 100, meters: { usd: 10 } } });
    expect(budgetOf(one([...base(), metered], attenuate({})))).toStrictEqual({ calls: 5, inputBytes: 100, meters: { usd: 10 } });
  });
  it('gives a rate-limited child’s budget no meters field', () => {
    expect(budgetOf(one([...base(), root()], attenuate({ budget: { rate: { calls: 1, windowMs: 50 } } })))).toStrictEqual({ calls: 5, inputBytes: 100, rate: { calls: 1, windowMs: 50 } });
  });
  it('keeps the chain’s meters beside a meter the child asks for alone', () => {
    const metered = root({ budget: { calls: 5, inputBytes: 100, meters: { usd: 10 } } });
    expect(budgetOf(one([...base(), metered], attenuate({ budget: { meters: { tokens: 3 } } })))).toStrictEqual({ calls: 5, inputBytes: 100, meters: { tokens: 3, usd: 10 } });
  });
  it('names no parent on a refusal whose token matched no grant', () => {
    expect(one([...base(), root()], attenuate({}, { parentGrantId: undefined }))).toStrictEqual({ type: 'attenuation.rejected', reason: 'unknown_token' });
  });
  it('names neither the revoker nor a target on a revocation whose token and target match no grant', () => {
    const revoke: Command = { type: 'revokeDelegation', at: T0 + 1, byGrantId: undefined, grantId: undefined, abortInFlight: false };
    expect(one([...base(), root()], revoke)).toStrictEqual({ type: 'revocation.rejected', reason: 'unknown_token' });
  });
});

describe('attenuate: resources', () => {
  it('lets a child take a resource that one of its parent’s several scopes covers', () => {
    const twoScopes = root({ resources: ['notes:/drafts/', 'notes:/shared/'] });
    expect(one([...base(), twoScopes], attenuate({ resources: ['notes:/drafts/a'] }))).toMatchObject({ type: 'grant.issued', scope: { resources: ['notes:/drafts/a'] } });
  });
});

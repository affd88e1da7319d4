import { createLedger } from '../../src';
import { shardGet } from '../../src/domain/shardedMap';
import type { GrantScope } from '../../src/domain/events';
import { ScopeInterner } from '../../src/stream/scopeInterner';

const scope = (tool: string, maximum = 10): GrantScope => ({
  tools: [tool],
  args: { [tool]: { properties: { n: { maximum } } } },
  resources: ['fs:/data/'],
  notBefore: 0,
  expiresAt: 10,
  budget: { calls: 5, inputBytes: 100 },
});

describe('ScopeInterner', () => {
  it('gives equal scope parts one shared, deep-frozen value', () => {
    const interner = new ScopeInterner();
    const a = interner.share(scope('t.a'));
    const b = interner.share(scope('t.a'));
    expect(b.args).toBe(a.args);
    expect(b.tools).toBe(a.tools);
    expect(b.resources).toBe(a.resources);
    expect(b.budget).toBe(a.budget);
    expect(Object.isFrozen(a.args)).toBe(true);
    expect(Object.isFrozen((a.args['t.a'] as { properties: object }).properties)).toBe(true);
  });

  it('keeps different parts apart and leaves the rest of the scope as given', () => {
    const interner = new ScopeInterner();
    const a = interner.share(scope('t.a', 10));
    const b = interner.share({ ...scope('t.a', 11), expiresAt: 99 });
    expect(b.args).not.toBe(a.args);
    expect(b.args).toEqual(scope('t.a', 11).args);
    expect(b.tools).toBe(a.tools);
    expect(b.expiresAt).toBe(99);
  });

  it('forgets the oldest part past its capacity, without changing values already handed out', () => {
    const interner = new ScopeInterner(2);
    const first = interner.share(scope('t.a')).args;
    interner.share(scope('t.b'));
    interner.share(scope('t.c'));
    const again = interner.share(scope('t.a')).args;
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });

  it('passes malformed parts through for decide to refuse', () => {
    const malformed = { ...scope('t.a'), tools: undefined } as unknown as GrantScope;
    expect(new ScopeInterner().share(malformed).tools).toBeUndefined();
  });
});

describe('issue', () => {
  const options = { tools: ['t.a'], args: { 't.a': { properties: { n: { maximum: 3 } } } }, budget: { calls: 5, inputBytes: 100 } };
  const twoGrants = async (): Promise<{ ledger: ReturnType<typeof createLedger>; one: { grantId: string; token: string }; two: { grantId: string; token: string } }> => {
    const ledger = createLedger();
    await ledger.registerTool({ name: 't.a', inputSchema: { type: 'object', properties: { n: { type: 'number' } } }, run: () => 1 });
    const one = await ledger.issue({ ...options, expiresAt: Date.now() + 60_000 });
    const two = await ledger.issue({ ...options, expiresAt: Date.now() + 60_000 });
    return { ledger, one, two };
  };

  it('gives grants issued with equal args one shared narrowing schema in the state', async () => {
    const { ledger, one, two } = await twoGrants();
    const state = ledger.state();
    expect(shardGet(state.grants, two.grantId)?.scope.args).toBe(shardGet(state.grants, one.grantId)?.scope.args);
    await ledger.close();
  });

  it('still logs each grant with its whole scope', async () => {
    const { ledger } = await twoGrants();
    const issued = ledger.events().filter((e) => e.type === 'grant.issued');
    expect(issued.map((e) => (e.type === 'grant.issued' ? e.scope.args : undefined))).toEqual([options.args, options.args]);
    await ledger.close();
  });

  it('enforces a shared narrowing schema on every grant that holds it', async () => {
    const { ledger, two } = await twoGrants();
    expect(await ledger.invoke(two.token, 't.a', { n: 4 })).toMatchObject({ status: 'rejected', reason: 'argument_not_permitted' });
    expect((await ledger.invoke(two.token, 't.a', { n: 3 })).status).toBe('completed');
    await ledger.close();
  });
});

import { limits, openLedger, replay, verify, type Ledger, type LedgerEvent } from '../../src';
import { AsyncMemoryStore } from '../support/asyncMemoryStore';
import { manualClock, notesLedger } from '../support/fixtures';

const minute = 60_000;

async function rooted(budget = { calls: 10, inputBytes: 10_000 }) {
  const clock = manualClock();
  const { ledger, notes, runs } = await notesLedger({ clock: clock.now });
  const root = await ledger.issue({
    tools: ['notes.write', 'notes.read'],
    args: { 'notes.write': { properties: { text: { maxLength: 20 } } } },
    resources: ['notes:/drafts/'],
    expiresAt: clock.now() + 10 * minute,
    budget,
  });
  return { clock, ledger, notes, runs, root };
}

async function child(ledger: Ledger, token: string, request: Parameters<Ledger['attenuate']>[1] = {}) {
  const outcome = await ledger.attenuate(token, request);
  if (outcome.status !== 'issued') throw new Error(`attenuate refused: ${outcome.reason}`);
  return outcome;
}

const lastEvent = (ledger: Ledger) => ledger.events()[ledger.events().length - 1];

describe('attenuate', () => {
  it('issues a child that names its parent, logged as grant.issued with parentGrantId and what the parent had left', async () => {
    const { ledger, root } = await rooted();
    expect(await ledger.invoke(root.token, 'notes.read', { path: 'drafts/a' })).toMatchObject({ status: 'completed' });
    const outcome = await ledger.attenuate(root.token, { tools: ['notes.read'], budget: { calls: 3 } });
    expect(outcome).toEqual({ status: 'issued', grantId: expect.any(String), token: expect.any(String), parentGrantId: root.grantId });
    const event = lastEvent(ledger);
    expect(event).toMatchObject({ type: 'grant.issued', parentGrantId: root.grantId, parentLeft: { calls: 9, inputBytes: 10_000 - 19 } });
    expect(event).toMatchObject({ scope: { tools: ['notes.read'], budget: { calls: 3, inputBytes: 10_000 - 19 }, resources: ['notes:/drafts/'] } });
    expect(JSON.stringify(ledger.events())).not.toContain(outcome.status === 'issued' ? outcome.token : '');
    await ledger.close();
  });

  it("defaults every field to the parent's, the budget to what the parent has left", async () => {
    const { ledger, root } = await rooted();
    const c = await child(ledger, root.token);
    expect(ledger.usage(c.grantId)).toEqual({ calls: { limit: 10, used: 0 }, inputBytes: { limit: 10_000, used: 0 } });
    expect(lastEvent(ledger)).toMatchObject({ scope: { tools: ['notes.write', 'notes.read'], args: {}, resources: ['notes:/drafts/'] } });
    await ledger.close();
  });

  it.each([
    ['a tool the parent lacks', { tools: ['notes.read', 'other'] }],
    ['a resource outside the parent', { resources: ['notes:/private/'] }],
    ["a scope wider than the parent's", { resources: ['notes:/'] }],
    ["the parent's prefix without its slash", { resources: ['notes:/drafts'] }],
    ['an earlier notBefore', { notBefore: 0 }],
    ['a later expiresAt', { expiresAt: Number.MAX_SAFE_INTEGER }],
    ['more calls than left', { budget: { calls: 11 } }],
    ['more bytes than left', { budget: { inputBytes: 10_001 } }],
  ])('refuses a request asking for %s as attenuation_widens', async (_what, request) => {
    const { ledger, root } = await rooted();
    await ledger.registerTool({ name: 'other', inputSchema: { type: 'object', properties: {} }, run: () => 'x' });
    const before = ledger.state();
    const outcome = await ledger.attenuate(root.token, request);
    expect(outcome).toMatchObject({ status: 'rejected', reason: 'attenuation_widens', message: expect.any(String) });
    expect(lastEvent(ledger)).toMatchObject({ type: 'attenuation.rejected', reason: 'attenuation_widens', parentGrantId: root.grantId });
    expect(ledger.state().grants).toBe(before.grants);
    await ledger.close();
  });

  it.each([
    ['not an object', 42],
    ['an unknown field', { scopes: [] }],
    ['tools not an array', { tools: 'notes.read' }],
    ['an args schema that is not an object', { args: { 'notes.read': true } }],
    ['an args schema that does not compile', { args: { 'notes.read': { type: 'no-such-type' } } }],
    ['a pattern the linear-time engine cannot run (a backreference)', { args: { 'notes.read': { properties: { path: { pattern: '^(a)\\1$' } } } } }],
    ['a $ref from the agent', { args: { 'notes.read': { $defs: { p: { maxLength: 3 } }, properties: { path: { $ref: '#/$defs/p' } } } } }],
    ['a property the tool does not declare', { args: { 'notes.read': { properties: { pth: { maxLength: 3 } } } } }],
    ['args for a tool it does not keep', { tools: ['notes.read'], args: { 'notes.write': {} } }],
    ['an empty tool list', { tools: [] }],
    ['a non-canonical resource', { resources: ['notes:/drafts/../x'] }],
    ['a negative budget', { budget: { calls: -1 } }],
    ['a fractional budget', { budget: { inputBytes: 1.5 } }],
    ['expiresAt before notBefore', { notBefore: 1_700_000_000_000 + 5 * minute, expiresAt: 1_700_000_000_000 + minute }],
    ['a malformed meter budget', { budget: { meters: { usd_micros: 1.5 } } }],
    ['a malformed meter name', { budget: { meters: { 'USD micros': 1 } } }],
    ['a rate window without windowMs', { budget: { rate: { calls: 1 } } }],
    ['a rate window of 0 calls', { budget: { rate: { calls: 0, windowMs: 1000 } } }],
    ['a call timeout that is not a positive integer', { callTimeoutMs: 0 }],
  ])('refuses %s as attenuation_invalid, logged once, without throwing', async (_what, request) => {
    const { ledger, root } = await rooted();
    const length = ledger.events().length;
    const outcome = await ledger.attenuate(root.token, request as never);
    expect(outcome).toMatchObject({ status: 'rejected', reason: 'attenuation_invalid' });
    expect(ledger.events()).toHaveLength(length + 1);
    expect(lastEvent(ledger)).toMatchObject({ type: 'attenuation.rejected', reason: 'attenuation_invalid', parentGrantId: root.grantId });
    await ledger.close();
  });

  it('never throws on a hostile request object (a throwing getter, a Proxy, a cycle)', async () => {
    const { ledger, root } = await rooted();
    const getter = Object.defineProperty({}, 'tools', { enumerable: true, get: () => { throw new Error('boom'); } });
    const proxy = new Proxy({}, { ownKeys: () => { throw new Error('boom'); } });
    const cycle: Record<string, unknown> = {};
    cycle.args = cycle;
    for (const request of [getter, proxy, cycle]) {
      expect(await ledger.attenuate(root.token, request as never)).toMatchObject({ status: 'rejected', reason: 'attenuation_invalid' });
    }
    await ledger.close();
  });

  it('refuses a request over the size bound without reading it further', async () => {
    const { ledger, root } = await rooted();
    const big = { args: { 'notes.read': { description: 'x'.repeat(limits.attenuationBytesMax) } } };
    expect(await ledger.attenuate(root.token, big)).toMatchObject({ reason: 'attenuation_invalid' });
    await ledger.close();
  });

  it('tells an unknown token first, without a parent in the event, and a message that echoes nothing', async () => {
    const { ledger } = await rooted();
    const outcome = await ledger.attenuate('secret-looking-token', { tools: 'bad' } as never);
    expect(outcome).toMatchObject({ status: 'rejected', reason: 'unknown_token' });
    expect(JSON.stringify(outcome)).not.toContain('secret-looking-token');
    expect(lastEvent(ledger)).toEqual(expect.objectContaining({ type: 'attenuation.rejected', reason: 'unknown_token' }));
    expect(lastEvent(ledger)).not.toHaveProperty('parentGrantId');
    await ledger.close();
  });

  it('refuses from a revoked, not yet valid or expired parent with that reason', async () => {
    const { ledger, clock, root } = await rooted();
    const late = await ledger.issue({ tools: ['notes.read'], notBefore: clock.now() + minute, expiresAt: clock.now() + 2 * minute, budget: { calls: 1, inputBytes: 100 } });
    expect(await ledger.attenuate(late.token, {})).toMatchObject({ reason: 'not_yet_valid' });
    clock.advance(2 * minute);
    expect(await ledger.attenuate(late.token, {})).toMatchObject({ reason: 'expired' });
    await ledger.revoke(root.grantId);
    expect(await ledger.attenuate(root.token, {})).toMatchObject({ reason: 'revoked' });
    await ledger.close();
  });

  it(`bounds the depth: a grant with ${limits.delegationDepthMax} ancestors cannot attenuate (attenuation_widens)`, async () => {
    const { ledger, root } = await rooted();
    let token = root.token;
    for (let depth = 1; depth <= limits.delegationDepthMax; depth++) token = (await child(ledger, token)).token;
    expect(await ledger.attenuate(token, {})).toMatchObject({ reason: 'attenuation_widens' });
    await ledger.close();
  });
});

describe('calls on a child', () => {
  it('reserves on the child and every ancestor in one call.admitted event that names them', async () => {
    const { ledger, root } = await rooted();
    const mid = await child(ledger, root.token, { budget: { calls: 5 } });
    const leaf = await child(ledger, mid.token, { budget: { calls: 2 } });
    expect(await ledger.invoke(leaf.token, 'notes.read', { path: 'drafts/a' })).toMatchObject({ status: 'completed' });
    const admitted = ledger.events().filter((e) => e.type === 'call.admitted');
    expect(admitted).toHaveLength(1);
    expect(admitted[0]).toMatchObject({ grantId: leaf.grantId, ancestors: [root.grantId, mid.grantId], reserved: { calls: 1 } });
    for (const id of [root.grantId, mid.grantId, leaf.grantId]) expect(ledger.usage(id).calls.used).toBe(1);
    await ledger.close();
  });

  it('is refused when any ancestor lacks budget, and no grant in the tree ever goes over', async () => {
    const { ledger, root } = await rooted({ calls: 3, inputBytes: 10_000 });
    const a = await child(ledger, root.token);
    const b = await child(ledger, root.token);
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, (_, i) => ledger.invoke((i % 2 === 0 ? a : b).token, 'notes.read', { path: `drafts/${i}` })),
    );
    expect(outcomes.filter((o) => o.status === 'completed')).toHaveLength(3);
    expect(outcomes.filter((o) => o.status === 'rejected' && o.reason === 'call_budget_exhausted')).toHaveLength(9);
    expect(ledger.usage(root.grantId).calls).toEqual({ limit: 3, used: 3 });
    expect(ledger.usage(a.grantId).calls.used + ledger.usage(b.grantId).calls.used).toBe(3);
    await ledger.close();
  });

  it("a child's budget of 0 means no call at all", async () => {
    const { ledger, root } = await rooted();
    const zero = await child(ledger, root.token, { budget: { calls: 0 } });
    expect(await ledger.invoke(zero.token, 'notes.read', { path: 'drafts/a' })).toMatchObject({ reason: 'call_budget_exhausted' });
    await ledger.close();
  });

  it("must pass every narrowing in the chain: the root's and the child's", async () => {
    const { ledger, root } = await rooted();
    const c = await child(ledger, root.token, { args: { 'notes.write': { properties: { path: { enum: ['drafts/ok'] } } } } });
    expect(await ledger.invoke(c.token, 'notes.write', { path: 'drafts/other', text: 'x' })).toMatchObject({ reason: 'argument_not_permitted' });
    expect(await ledger.invoke(c.token, 'notes.write', { path: 'drafts/ok', text: 'x'.repeat(21) })).toMatchObject({ reason: 'argument_not_permitted' });
    expect(await ledger.invoke(c.token, 'notes.write', { path: 'drafts/ok', text: 'fine' })).toMatchObject({ status: 'completed' });
    await ledger.close();
  });

  it("is checked against the child's narrower tools and resources", async () => {
    const { ledger, root } = await rooted();
    const c = await child(ledger, root.token, { tools: ['notes.read'], resources: ['notes:/drafts/team/'] });
    expect(await ledger.invoke(c.token, 'notes.write', { path: 'drafts/team/a', text: 'x' })).toMatchObject({ reason: 'tool_not_granted' });
    expect(await ledger.invoke(c.token, 'notes.read', { path: 'drafts/a' })).toMatchObject({ reason: 'resource_not_permitted' });
    expect(await ledger.invoke(c.token, 'notes.read', { path: 'drafts/team/a' })).toMatchObject({ status: 'completed' });
    await ledger.close();
  });

  it('a refund gives back along the same chain', async () => {
    const { clock } = await rooted();
    const { ledger } = await notesLedger({ clock: clock.now, onToolError: 'refund' });
    await ledger.registerTool({ name: 'boom', inputSchema: { type: 'object', properties: {} }, run: () => { throw new Error('broke'); } });
    const root = await ledger.issue({ tools: ['boom'], expiresAt: clock.now() + minute, budget: { calls: 2, inputBytes: 100 } });
    const c = await child(ledger, root.token);
    expect(await ledger.invoke(c.token, 'boom', {})).toMatchObject({ status: 'failed' });
    expect(ledger.usage(root.grantId).calls.used).toBe(0);
    expect(ledger.usage(c.grantId).calls.used).toBe(0);
    await ledger.close();
  });

  it('is refused once the ancestor has expired', async () => {
    const { ledger, clock, root } = await rooted();
    const c = await child(ledger, root.token);
    clock.advance(10 * minute);
    expect(await ledger.invoke(c.token, 'notes.read', { path: 'drafts/a' })).toMatchObject({ reason: 'expired' });
    await ledger.close();
  });
});

describe('cascading revocation', () => {
  it("revoking a grant refuses every descendant's call from then on, as revoked", async () => {
    const { ledger, root } = await rooted();
    const mid = await child(ledger, root.token);
    const leaf = await child(ledger, mid.token);
    await ledger.revoke(mid.grantId);
    expect(await ledger.invoke(leaf.token, 'notes.read', { path: 'drafts/a' })).toMatchObject({ reason: 'revoked' });
    expect(await ledger.invoke(mid.token, 'notes.read', { path: 'drafts/a' })).toMatchObject({ reason: 'revoked' });
    expect(await ledger.invoke(root.token, 'notes.read', { path: 'drafts/a' })).toMatchObject({ status: 'completed' });
    expect(ledger.visibleTools(leaf.token)).toEqual([]);
    await ledger.close();
  });

  it("abortInFlight reaches the running calls of the revoked grant's descendants", async () => {
    const { ledger } = await rooted();
    const signals: AbortSignal[] = [];
    let started: () => void = () => undefined;
    const running = new Promise<void>((r) => (started = r));
    await ledger.registerTool({
      name: 'wait',
      inputSchema: { type: 'object', properties: {} },
      run: (_args, ctx) => new Promise((resolve) => { signals.push(ctx.signal); ctx.signal.addEventListener('abort', () => resolve('aborted')); started(); }),
    });
    const top = await ledger.issue({ tools: ['wait'], expiresAt: Date.now() + 1e9, budget: { calls: 5, inputBytes: 100 } });
    const mid = await child(ledger, top.token);
    const leaf = await child(ledger, mid.token);
    const call = ledger.invoke(leaf.token, 'wait', {});
    await running;
    await ledger.revoke(mid.grantId, { abortInFlight: true });
    expect(await call).toMatchObject({ status: 'completed', value: 'aborted' });
    expect(signals[0]?.aborted).toBe(true);
    await ledger.close();
  });
});

describe('revokeDelegation', () => {
  it('lets an orchestrator revoke a grant below its own, logged with revokedBy', async () => {
    const { ledger, root } = await rooted();
    const mid = await child(ledger, root.token);
    const leaf = await child(ledger, mid.token);
    expect(await ledger.revokeDelegation(root.token, leaf.grantId)).toEqual({ status: 'revoked' });
    expect(lastEvent(ledger)).toMatchObject({ type: 'grant.revoked', grantId: leaf.grantId, revokedBy: root.grantId, abortInFlight: false });
    expect(await ledger.invoke(leaf.token, 'notes.read', { path: 'drafts/a' })).toMatchObject({ reason: 'revoked' });
    expect(await ledger.revokeDelegation(root.token, leaf.grantId)).toEqual({ status: 'revoked' });
    await ledger.close();
  });

  it.each([
    ['its own grant', 'self'],
    ['its parent', 'parent'],
    ['a sibling', 'sibling'],
    ['an id that names no grant', 'none'],
  ] as const)('refuses to revoke %s as not_a_descendant, logged once', async (_what, which) => {
    const { ledger, root } = await rooted();
    const mid = await child(ledger, root.token);
    const sibling = await child(ledger, root.token);
    const target = { self: mid.grantId, parent: root.grantId, sibling: sibling.grantId, none: 'g_nope' }[which];
    const length = ledger.events().length;
    expect(await ledger.revokeDelegation(mid.token, target)).toMatchObject({ status: 'rejected', reason: 'not_a_descendant' });
    expect(ledger.events()).toHaveLength(length + 1);
    expect(lastEvent(ledger)).toMatchObject({ type: 'revocation.rejected', reason: 'not_a_descendant', revokedBy: mid.grantId });
    expect(await ledger.invoke(sibling.token, 'notes.read', { path: 'drafts/a' })).toMatchObject({ status: 'completed' });
    await ledger.close();
  });

  it('refuses an unknown token and never throws on hostile input', async () => {
    const { ledger, root } = await rooted();
    expect(await ledger.revokeDelegation('nope', root.grantId)).toMatchObject({ reason: 'unknown_token' });
    expect(await ledger.revokeDelegation(root.token, { toString: () => { throw new Error('x'); } } as never)).toMatchObject({ reason: 'not_a_descendant' });
    expect(await ledger.revokeDelegation(root.token, 'x'.repeat(10_000))).toMatchObject({ reason: 'not_a_descendant' });
    await ledger.close();
  });
});

describe('visibleTools along a chain', () => {
  it("lists the child's tools with the narrowing of every grant in its chain, root first", async () => {
    const { ledger, root } = await rooted();
    const narrower = { properties: { path: { enum: ['drafts/ok'] } } };
    const c = await child(ledger, root.token, { tools: ['notes.write'], args: { 'notes.write': narrower } });
    expect(ledger.visibleTools(c.token)).toEqual([{ name: 'notes.write', inputSchema: expect.any(Object), narrowing: [{ properties: { text: { maxLength: 20 } } }, narrower] }]);
    await ledger.close();
  });
});

describe('replay and verify', () => {
  it('replay of a delegation log deep-equals the live state, and verify passes', async () => {
    const { ledger, root } = await rooted();
    const mid = await child(ledger, root.token, { budget: { calls: 4 } });
    const leaf = await child(ledger, mid.token, { tools: ['notes.read'] });
    await ledger.invoke(leaf.token, 'notes.read', { path: 'drafts/a' });
    await ledger.attenuate(leaf.token, { tools: ['notes.write'] });
    await ledger.revokeDelegation(leaf.token, root.grantId);
    await ledger.revokeDelegation(root.token, leaf.grantId);
    await ledger.invoke(leaf.token, 'notes.read', { path: 'drafts/a' });
    expect(replay(ledger.events())).toEqual(ledger.state());
    expect(verify(ledger.events())).toEqual({ ok: true, checked: ledger.events().length, problems: [] });
    await ledger.close();
  });
});

describe('with an asynchronous store (openLedger), shared by two ledgers', () => {
  it('attenuates, charges the chain and cascades a revocation across both ledgers', async () => {
    const log: LedgerEvent[] = [];
    const open = async () => {
      const l = await openLedger({ store: new AsyncMemoryStore(log) });
      await l.registerTool({ name: 'work', inputSchema: { type: 'object', properties: {} }, run: () => 'ok' });
      return l;
    };
    const a = await open();
    const b = await open();
    const root = await a.issue({ tools: ['work'], expiresAt: Date.now() + minute, budget: { calls: 3, inputBytes: 100 } });
    const c = await b.attenuate(root.token, { budget: { calls: 2 } });
    expect(c).toMatchObject({ status: 'issued', parentGrantId: root.grantId });
    if (c.status !== 'issued') return;
    expect(await a.invoke(c.token, 'work', {})).toMatchObject({ status: 'completed' });
    expect(await b.invoke(root.token, 'work', {})).toMatchObject({ status: 'completed' });
    expect(await b.invoke(c.token, 'work', {})).toMatchObject({ status: 'completed' });
    // root 3/3, child 2/2: a call on either is refused, whichever ledger decides it.
    expect(await a.invoke(root.token, 'work', {})).toMatchObject({ reason: 'call_budget_exhausted' });
    expect(b.usage(root.grantId).calls).toEqual({ limit: 3, used: 3 });
    await a.revoke(root.grantId);
    expect(await b.invoke(c.token, 'work', {})).toMatchObject({ reason: 'revoked' });
    expect(verify(log)).toMatchObject({ ok: true });
    await a.close();
    await b.close();
  });
});

import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { createLedger, memoryStore, replay, type LedgerEvent } from '../../src';
import { manualClock, noteSchema, notesLedger } from '../support/fixtures';

const hour = 3_600_000;

describe('atomic admission', () => {
  it.each([1, 2, 3, 4, 5])('admits exactly 7 of 64 concurrent calls against calls: 7 (round %i)', async () => {
    const { ledger, notes } = await notesLedger();
    const { token, grantId } = await ledger.issue({ tools: ['notes.write'], resources: ['notes:/drafts/'], expiresAt: Date.now() + hour, budget: { calls: 7, inputBytes: 1_000_000 } });
    const outcomes = await Promise.all(Array.from({ length: 64 }, (_, i) => ledger.invoke(token, 'notes.write', { path: `drafts/${i}`, text: 'x' })));
    expect(outcomes.filter((o) => o.status === 'completed')).toHaveLength(7);
    expect(outcomes.filter((o) => o.status === 'rejected' && o.reason === 'call_budget_exhausted')).toHaveLength(57);
    expect(notes.size).toBe(7);
    expect(ledger.usage(grantId)).toEqual({ calls: { limit: 7, used: 7 }, inputBytes: { limit: 1_000_000, used: expect.any(Number) } });
    await ledger.close();
  });

  it('admits exactly as many calls as the byte budget covers', async () => {
    const { ledger, notes } = await notesLedger();
    const args = (i: number) => ({ path: `drafts/${String(i).padStart(2, '0')}`, text: 'x' });
    const bytes = Buffer.byteLength(JSON.stringify(args(0)));
    const { token } = await ledger.issue({ tools: ['notes.write'], resources: ['notes:/drafts/'], expiresAt: Date.now() + hour, budget: { calls: 1000, inputBytes: bytes * 7 } });
    const outcomes = await Promise.all(Array.from({ length: 64 }, (_, i) => ledger.invoke(token, 'notes.write', args(i))));
    expect(outcomes.filter((o) => o.status === 'completed')).toHaveLength(7);
    expect(outcomes.filter((o) => o.status === 'rejected' && o.reason === 'byte_budget_exhausted')).toHaveLength(57);
    expect(notes.size).toBe(7);
    await ledger.close();
  });

  it('counts in-flight reservations as used', async () => {
    const { ledger } = await notesLedger();
    let release: () => void = () => undefined;
    await ledger.registerTool({ name: 'slow', inputSchema: { type: 'object', properties: {} }, run: () => new Promise<void>((r) => (release = r)) });
    const { token, grantId } = await ledger.issue({ tools: ['slow'], expiresAt: Date.now() + hour, budget: { calls: 1, inputBytes: 100 } });
    const admittedEvent = new Promise<void>((resolve) => ledger.decisions$.subscribe((e) => e.type === 'call.admitted' && resolve()));
    const first = ledger.invoke(token, 'slow', {});
    await admittedEvent;
    expect(ledger.usage(grantId).calls.used).toBe(1);
    expect(ledger.inFlight()).toHaveLength(1);
    expect(await ledger.invoke(token, 'slow', {})).toMatchObject({ reason: 'call_budget_exhausted' });
    release();
    expect(await first).toMatchObject({ status: 'completed' });
    expect(ledger.inFlight()).toHaveLength(0);
    await ledger.close();
  });
});

describe('tool failures', () => {
  async function failingCall(onToolError: 'consume' | 'refund') {
    const ledger = createLedger({ onToolError });
    await ledger.registerTool({ name: 'boom', inputSchema: { type: 'object', properties: {} }, run: () => { throw new Error('tool broke'); } });
    const { token, grantId } = await ledger.issue({ tools: ['boom'], expiresAt: Date.now() + hour, budget: { calls: 3, inputBytes: 100 } });
    const outcome = await ledger.invoke(token, 'boom', {});
    return { ledger, grantId, outcome };
  }

  it('returns failed with the error and consumes the budget by default', async () => {
    const { ledger, grantId, outcome } = await failingCall('consume');
    expect(outcome).toMatchObject({ status: 'failed', error: expect.objectContaining({ message: 'tool broke' }) });
    expect(ledger.usage(grantId).calls.used).toBe(1);
    expect(ledger.events().at(-1)).toMatchObject({ type: 'call.failed', refunded: { calls: 0, inputBytes: 0 } });
    await ledger.close();
  });

  it("gives the reservation back with onToolError: 'refund'", async () => {
    const { ledger, grantId, outcome } = await failingCall('refund');
    expect(outcome.status).toBe('failed');
    expect(ledger.usage(grantId)).toEqual({ calls: { limit: 3, used: 0 }, inputBytes: { limit: 100, used: 0 } });
    expect(replay(ledger.events())).toEqual(ledger.state());
    await ledger.close();
  });

  it('keeps the tool error out of the log', async () => {
    const { ledger } = await failingCall('consume');
    expect(JSON.stringify(ledger.events())).not.toContain('tool broke');
    await ledger.close();
  });
});

describe('revocation', () => {
  async function blockedCall(abortInFlight: boolean) {
    const { ledger } = await notesLedger();
    let entered: () => void = () => undefined;
    const inside = new Promise<void>((r) => (entered = r));
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    let sawAbort = false;
    await ledger.registerTool({
      name: 'block',
      inputSchema: { type: 'object', properties: {} },
      run: async (_args, ctx) => {
        ctx.signal.addEventListener('abort', () => { sawAbort = true; release(); });
        entered();
        await gate;
        return ctx.signal.aborted ? 'aborted' : 'finished';
      },
    });
    const { token, grantId } = await ledger.issue({ tools: ['block'], expiresAt: Date.now() + hour, budget: { calls: 10, inputBytes: 1000 } });
    const first = ledger.invoke(token, 'block', {});
    await inside;
    await ledger.revoke(grantId, { abortInFlight });
    return { ledger, token, first, release, sawAbort: () => sawAbort };
  }

  it('lets an admitted call finish and rejects every later call as revoked', async () => {
    const { ledger, token, first, release, sawAbort } = await blockedCall(false);
    expect(await ledger.invoke(token, 'block', {})).toMatchObject({ status: 'rejected', reason: 'revoked' });
    release();
    expect(await first).toMatchObject({ status: 'completed', value: 'finished' });
    expect(sawAbort()).toBe(false);
    const types = ledger.events().map((e) => e.type);
    expect(types.slice(-4)).toEqual(['call.admitted', 'grant.revoked', 'call.rejected', 'call.completed']);
    await ledger.close();
  });

  it('aborts the signal of admitted calls with abortInFlight', async () => {
    const { ledger, first, sawAbort } = await blockedCall(true);
    expect(await first).toMatchObject({ status: 'completed', value: 'aborted' });
    expect(sawAbort()).toBe(true);
    await ledger.close();
  });
});

describe('observers', () => {
  it('streams every event in log order to every subscriber', async () => {
    const { ledger } = await notesLedger();
    const seen: LedgerEvent[] = [];
    const decisions: string[] = [];
    ledger.events$.subscribe((e) => seen.push(e));
    ledger.decisions$.subscribe((e) => decisions.push(e.type));
    const { token } = await ledger.issue({ tools: ['notes.write'], resources: ['notes:/drafts/'], expiresAt: Date.now() + hour, budget: { calls: 1, inputBytes: 500 } });
    await ledger.invoke(token, 'notes.write', { path: 'drafts/a', text: 'x' });
    await ledger.invoke(token, 'notes.write', { path: 'drafts/b', text: 'x' });
    const log = ledger.events();
    expect(seen).toEqual(log.slice(log.length - seen.length));
    expect(seen.map((e) => e.type)).toEqual(['grant.issued', 'call.admitted', 'call.completed', 'call.rejected']);
    expect(decisions).toEqual(['call.admitted', 'call.rejected']);
    await ledger.close();
  });

  it('isolates a subscriber that throws: admission and other subscribers go on', async () => {
    const { ledger } = await notesLedger();
    ledger.events$.subscribe(() => { throw new Error('subscriber bug'); });
    const seen: string[] = [];
    ledger.events$.subscribe((e) => seen.push(e.type));
    const { token } = await ledger.issue({ tools: ['notes.write'], resources: ['notes:/drafts/'], expiresAt: Date.now() + hour, budget: { calls: 5, inputBytes: 500 } });
    expect(await ledger.invoke(token, 'notes.write', { path: 'drafts/a', text: 'x' })).toMatchObject({ status: 'completed' });
    expect(await ledger.invoke(token, 'notes.write', { path: 'drafts/b', text: 'x' })).toMatchObject({ status: 'completed' });
    expect(seen).toEqual(['grant.issued', 'call.admitted', 'call.completed', 'call.admitted', 'call.completed']);
    await ledger.close();
  });

  it('keeps the process alive when a subscriber throws (RxJS would rethrow it on a timer)', () => {
    // A real process, because the failure mode is an uncaught exception that kills it.
    const script = `
      const { createLedger } = require(${JSON.stringify(path.resolve(__dirname, '..', '../dist/src/index.js'))});
      (async () => {
        const ledger = createLedger();
        ledger.events$.subscribe(() => { throw new Error('subscriber bug'); });
        await ledger.registerTool({ name: 'noop', inputSchema: { type: 'object', properties: {} }, run: () => 1 });
        const { token } = await ledger.issue({ tools: ['noop'], expiresAt: Date.now() + 60000, budget: { calls: 5, inputBytes: 500 } });
        const outcome = await ledger.invoke(token, 'noop', {});
        await new Promise((r) => setTimeout(r, 0));
        await new Promise((r) => setTimeout(r, 0));
        process.stdout.write('alive ' + outcome.status);
      })();`;
    const result = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    expect(result.status).toBe(0);
    expect(result.stdout).toBe('alive completed');
    expect(result.stderr).toContain('ATC_SUBSCRIBER_ERROR');
    expect(result.stderr).not.toContain('subscriber bug');
  });

  it('does not wait for a subscriber whose work is asynchronous', async () => {
    const { ledger } = await notesLedger();
    let subscriberDone = false;
    ledger.events$.subscribe(() => { void new Promise<void>(() => undefined).then(() => (subscriberDone = true)); });
    const { token } = await ledger.issue({ tools: ['notes.write'], resources: ['notes:/drafts/'], expiresAt: Date.now() + hour, budget: { calls: 5, inputBytes: 500 } });
    expect(await ledger.invoke(token, 'notes.write', { path: 'drafts/a', text: 'x' })).toMatchObject({ status: 'completed' });
    expect(subscriberDone).toBe(false);
    await ledger.close();
  });
});

describe('log hygiene', () => {
  it('never writes a token or an argument value into the log or a rejection message', async () => {
    const clock = manualClock();
    const { ledger } = await notesLedger({ clock: clock.now });
    const markers = ['MARK-path-1b9e', 'MARK-text-77c1', 'MARK-resource-02aa', 'MARK-narrow-5d3f'];
    const tokens: string[] = [];
    const outcomes: unknown[] = [];
    const g1 = await ledger.issue({ tools: ['notes.write', 'notes.read'], args: { 'notes.write': { properties: { text: { maxLength: 40 } } } }, resources: ['notes:/drafts/'], expiresAt: clock.now() + hour, budget: { calls: 3, inputBytes: 2000 } });
    const g2 = await ledger.issue({ tools: ['notes.read'], resources: ['notes:/drafts/'], expiresAt: clock.now() + hour, budget: { calls: 3, inputBytes: 2000 } });
    tokens.push(g1.token, g2.token);
    outcomes.push(await ledger.invoke(g1.token, 'notes.write', { path: `drafts/${markers[0]}`, text: markers[1] }));
    outcomes.push(await ledger.invoke(g1.token, 'notes.write', { path: `drafts/../${markers[2]}`, text: 'x' }));
    outcomes.push(await ledger.invoke(g1.token, 'notes.write', { path: 'drafts/a', text: `${markers[3]}${'!'.repeat(50)}` }));
    outcomes.push(await ledger.invoke(g2.token, 'notes.write', { path: 'drafts/a', text: markers[1] }));
    outcomes.push(await ledger.invoke(`${g1.token}x`, 'notes.read', { path: markers[0] }));
    outcomes.push(await ledger.invoke(g1.token, 'notes.read', { path: `drafts/${markers[0]}`, extra: markers[1] }));
    await ledger.revoke(g1.grantId);
    outcomes.push(await ledger.invoke(g1.token, 'notes.read', { path: `drafts/${markers[0]}` }));
    const haystack = JSON.stringify(ledger.events()) + JSON.stringify(outcomes);
    for (const needle of [...markers, ...tokens]) expect(haystack).not.toContain(needle);
    // The tokens' digests are in the log (for lookup after restart); the tokens are not.
    expect(JSON.stringify(ledger.events())).toContain('tokenDigest');
    await ledger.close();
  });
});

describe('host input', () => {
  it('returns a 256-bit token shown once and stores only its digest', async () => {
    const { ledger } = await notesLedger();
    const { token } = await ledger.issue({ tools: ['notes.write'], expiresAt: Date.now() + hour, budget: { calls: 1, inputBytes: 1 } });
    expect(Buffer.from(token.replace(/^atc_/, ''), 'base64url')).toHaveLength(32);
    expect(JSON.stringify(ledger.state())).not.toContain(token);
    await ledger.close();
  });

  it.each([
    ['an unregistered tool', { tools: ['nope'], expiresAt: Date.now() + hour, budget: { calls: 1, inputBytes: 1 } }, /not registered/],
    ['a missing budget', { tools: ['notes.write'], expiresAt: Date.now() + hour }, /budget/],
    ['an unsafe integer budget', { tools: ['notes.write'], expiresAt: Date.now() + hour, budget: { calls: 2 ** 60, inputBytes: 1 } }, /budget.calls/],
    ['a missing expiresAt', { tools: ['notes.write'], budget: { calls: 1, inputBytes: 1 } }, /expiresAt/],
    ['expiresAt before notBefore', { tools: ['notes.write'], notBefore: 10, expiresAt: 5, budget: { calls: 1, inputBytes: 1 } }, /after notBefore/],
    ['a non-canonical scope', { tools: ['notes.write'], resources: ['notes:/a/./b/'], expiresAt: Date.now() + hour, budget: { calls: 1, inputBytes: 1 } }, /canonical/],
    ['a narrowing schema that does not compile', { tools: ['notes.write'], args: { 'notes.write': { type: 'bogus' } }, expiresAt: Date.now() + hour, budget: { calls: 1, inputBytes: 1 } }, /does not compile/],
  ])('rejects issue with %s, appending nothing', async (_label, options, message) => {
    const { ledger } = await notesLedger();
    const before = ledger.events().length;
    await expect(ledger.issue(options as never)).rejects.toThrow(message);
    expect(ledger.events()).toHaveLength(before);
    await ledger.close();
  });

  it('freezes the scope at issue: mutating the options afterwards changes nothing', async () => {
    const { ledger } = await notesLedger();
    const options = { tools: ['notes.write'], resources: ['notes:/drafts/'], expiresAt: Date.now() + hour, budget: { calls: 1, inputBytes: 100 } };
    const { token } = await ledger.issue(options);
    options.resources.push('notes:/');
    options.budget.calls = 100;
    expect(await ledger.invoke(token, 'notes.write', { path: 'secrets/a', text: 'x' })).toMatchObject({ reason: 'resource_not_permitted' });
    await ledger.close();
  });

  it.each([
    ['a bad name', { name: 'Bad Name', inputSchema: { type: 'object' }, run: (): number => 1 }, /must match/],
    ['a schema that does not compile', { name: 'x.y', inputSchema: { type: 'object', properties: { a: { type: 'bogus' } } }, run: (): number => 1 }, /does not compile/],
    ['a non-object schema', { name: 'x.y', inputSchema: { type: 'string' }, run: (): number => 1 }, /object/],
    ['a name this ledger already registered', { name: 'notes.write', inputSchema: noteSchema, run: (): number => 1 }, /already registered/],
  ])('rejects registerTool with %s', async (_label, tool, message) => {
    const { ledger } = await notesLedger();
    await expect(ledger.registerTool(tool as never)).rejects.toThrow(message);
    await ledger.close();
  });

  it('re-attaches a tool after a restart without appending, and refuses a changed schema', async () => {
    const { ledger } = await notesLedger();
    const { token } = await ledger.issue({ tools: ['notes.write'], resources: ['notes:/drafts/'], expiresAt: Date.now() + hour, budget: { calls: 2, inputBytes: 500 } });
    await ledger.invoke(token, 'notes.write', { path: 'drafts/a', text: 'x' });
    await ledger.close();
    const store = memoryStore(ledger.events());
    const reopened = createLedger({ store });
    const before = reopened.events().length;
    const written: string[] = [];
    await reopened.registerTool<{ path: string; text: string }>({ name: 'notes.write', inputSchema: noteSchema, resources: (a) => [`notes:/${a.path}`], run: (a) => written.push(a.path) });
    expect(reopened.events()).toHaveLength(before);
    await expect(reopened.registerTool({ name: 'notes.read', inputSchema: { type: 'object', properties: { other: { type: 'string' } } }, run: () => 1 })).rejects.toThrow(/different inputSchema/);
    expect(await reopened.invoke(token, 'notes.write', { path: 'drafts/b', text: 'x' })).toMatchObject({ status: 'completed' });
    expect(await reopened.invoke(token, 'notes.write', { path: 'drafts/c', text: 'x' })).toMatchObject({ reason: 'call_budget_exhausted' });
    expect(written).toEqual(['drafts/b']);
    await reopened.close();
  });

  it('rejects a call to a tool that is in the log but has no implementation attached here', async () => {
    const { ledger } = await notesLedger();
    const { token } = await ledger.issue({ tools: ['notes.write'], resources: ['notes:/drafts/'], expiresAt: Date.now() + hour, budget: { calls: 2, inputBytes: 500 } });
    await ledger.close();
    const reopened = createLedger({ store: memoryStore(ledger.events()) });
    expect(await reopened.invoke(token, 'notes.write', { path: 'drafts/b', text: 'x' })).toMatchObject({ status: 'rejected', reason: 'ledger_unavailable' });
    expect(reopened.events()).toHaveLength(ledger.events().length);
    await reopened.close();
  });
});

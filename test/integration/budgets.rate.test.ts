import { createLedger, replay, sealEvent, verify, type Ledger, type LedgerEvent, type LedgerOptions } from '../../src';
import { manualClock } from '../support/fixtures';

const minute = 60_000;

async function rateLedger(options: LedgerOptions = {}) {
  const clock = manualClock();
  const ledger = createLedger({ clock: clock.now, ...options });
  const runs: number[] = [];
  await ledger.registerTool<{ fail?: boolean }>({
    name: 'search',
    inputSchema: { type: 'object', properties: { fail: { type: 'boolean' } } },
    run: (args) => {
      runs.push(clock.now());
      if (args.fail === true) throw new Error('down');
      return 'hits';
    },
  });
  return { clock, ledger, runs };
}

const issueRated = (ledger: Ledger, clock: { now: () => number }, rate: { calls: number; windowMs: number }) =>
  ledger.issue({ tools: ['search'], expiresAt: clock.now() + 60 * minute, budget: { calls: 1_000, inputBytes: 1_000_000, rate } });

const last = (ledger: Ledger): LedgerEvent => ledger.events()[ledger.events().length - 1] as LedgerEvent;

function expectFold(ledger: Ledger): void {
  expect(verify(ledger.events())).toMatchObject({ ok: true, problems: [] });
  expect(replay(ledger.events())).toEqual(ledger.state());
}

describe('budget.rate on issue', () => {
  it.each([
    ['not an object', 5, 'budget.rate must be { calls, windowMs }'],
    ['without windowMs', { calls: 1 }, 'budget.rate.windowMs must be a positive safe integer'],
    ['0 calls', { calls: 0, windowMs: 1_000 }, 'budget.rate.calls must be an integer from 1 to 10000'],
    ['calls beyond the bound', { calls: 10_001, windowMs: 1_000 }, 'budget.rate.calls must be an integer from 1 to 10000'],
    ['a fractional window', { calls: 1, windowMs: 0.5 }, 'budget.rate.windowMs must be a positive safe integer'],
    ['a zero window', { calls: 1, windowMs: 0 }, 'budget.rate.windowMs must be a positive safe integer'],
    ['an extra field', { calls: 1, windowMs: 5, burst: 2 }, 'budget.rate may hold only calls and windowMs'],
  ])('refuses a rate %s, naming the field', async (_what, rate, message) => {
    const { ledger, clock } = await rateLedger();
    await expect(issueRated(ledger, clock, rate as never)).rejects.toThrow(message);
    await ledger.close();
  });
});

describe('sliding rate windows', () => {
  it('admits `calls` in the window, then refuses rate_limited with the exact retryAfterMs (outcome and event)', async () => {
    const { ledger, clock, runs } = await rateLedger();
    const { grantId, token } = await issueRated(ledger, clock, { calls: 3, windowMs: 1_000 });
    const t0 = clock.now();
    for (const dt of [0, 100, 400]) {
      clock.set(t0 + dt);
      expect(await ledger.invoke(token, 'search', {})).toMatchObject({ status: 'completed' });
    }
    clock.set(t0 + 600);
    const before = ledger.state().grants;
    expect(await ledger.invoke(token, 'search', {})).toMatchObject({ status: 'rejected', reason: 'rate_limited', retryAfterMs: 400 });
    expect(last(ledger)).toMatchObject({ type: 'call.rejected', reason: 'rate_limited', retryAfterMs: 400 });
    expect(ledger.state().grants).toBe(before);
    expect(ledger.usage(grantId).rate).toEqual({ limit: 3, windowMs: 1_000, inWindow: 3 });
    // at t0 + 999 the first admission (t0) is still inside (at > t − windowMs), at t0 + 1000 it is not
    clock.set(t0 + 999);
    expect(await ledger.invoke(token, 'search', {})).toMatchObject({ reason: 'rate_limited', retryAfterMs: 1 });
    clock.set(t0 + 1_000);
    expect(await ledger.invoke(token, 'search', {})).toMatchObject({ status: 'completed' });
    expect(runs).toHaveLength(4);
    expect(ledger.usage(grantId).rate).toEqual({ limit: 3, windowMs: 1_000, inWindow: 3 });
    clock.set(t0 + 10_000);
    expect(ledger.usage(grantId).rate?.inWindow).toBe(0);
    expectFold(ledger);
    await ledger.close();
  });

  it('rounds a fractional wait up to whole ms', async () => {
    const { ledger, clock } = await rateLedger();
    const { token } = await issueRated(ledger, clock, { calls: 1, windowMs: 10 });
    clock.set(clock.now() + 0.25);
    await ledger.invoke(token, 'search', {});
    clock.set(clock.now() + 1);
    expect(await ledger.invoke(token, 'search', {})).toMatchObject({ reason: 'rate_limited', retryAfterMs: 9 });
    await ledger.close();
  });

  it('is last in precedence: a call the budget refuses is not rate_limited', async () => {
    const { ledger, clock } = await rateLedger();
    const { token } = await ledger.issue({ tools: ['search'], expiresAt: clock.now() + minute, budget: { calls: 1, inputBytes: 1_000, rate: { calls: 1, windowMs: 1_000 } } });
    await ledger.invoke(token, 'search', {});
    expect(await ledger.invoke(token, 'search', {})).toMatchObject({ reason: 'call_budget_exhausted' });
    await ledger.close();
  });

  it('a refund does not give rate back: the admission happened', async () => {
    const { ledger, clock } = await rateLedger({ onToolError: 'refund' });
    const { grantId, token } = await issueRated(ledger, clock, { calls: 1, windowMs: 1_000 });
    expect(await ledger.invoke(token, 'search', { fail: true })).toMatchObject({ status: 'failed' });
    expect(ledger.usage(grantId).calls.used).toBe(0);
    expect(await ledger.invoke(token, 'search', {})).toMatchObject({ reason: 'rate_limited' });
    await ledger.close();
  });

  it('keeps at most `calls` admission times per grant (the last ones), in at most calls + 32 stored times', async () => {
    const { admissionTimes } = await import('../../src/domain/rateWindow');
    const { grantsOf } = await import('../../src');
    for (const calls of [1, 2, 31, 32, 33, 100]) {
      const { ledger, clock } = await rateLedger();
      const { grantId, token } = await issueRated(ledger, clock, { calls, windowMs: 10 });
      const t0 = clock.now();
      for (let i = 0; i < 150; i++) {
        clock.advance(10);
        expect(await ledger.invoke(token, 'search', {})).toMatchObject({ status: 'completed' });
      }
      const grant = [...grantsOf(ledger.state())].find((g) => g.grantId === grantId);
      expect(admissionTimes(grant?.admissions)).toEqual(Array.from({ length: calls }, (_, k) => t0 + 10 * (150 - calls + 1 + k)));
      const stored = grant?.admissions?.chunks.reduce((n, c) => n + c.length, 0) ?? 0;
      expect(stored).toBeLessThanOrEqual(calls + 32);
      expect(replay(ledger.events()).grants).toEqual(ledger.state().grants);
      await ledger.close();
    }
  });
});

describe('rate windows along a delegation chain', () => {
  it("a child's admissions count on its root's window, and the root's window refuses the child", async () => {
    const { ledger, clock } = await rateLedger();
    const root = await issueRated(ledger, clock, { calls: 2, windowMs: 1_000 });
    const a = await ledger.attenuate(root.token, {});
    const b = await ledger.attenuate(root.token, {});
    if (a.status !== 'issued' || b.status !== 'issued') throw new Error('attenuate refused');
    expect(await ledger.invoke(a.token, 'search', {})).toMatchObject({ status: 'completed' });
    clock.advance(10);
    expect(await ledger.invoke(b.token, 'search', {})).toMatchObject({ status: 'completed' });
    clock.advance(10);
    expect(await ledger.invoke(root.token, 'search', {})).toMatchObject({ reason: 'rate_limited', retryAfterMs: 980 });
    expect(await ledger.invoke(a.token, 'search', {})).toMatchObject({ reason: 'rate_limited', retryAfterMs: 980 });
    expect(ledger.usage(root.grantId).rate?.inWindow).toBe(2);
    expect(ledger.usage(a.grantId)).not.toHaveProperty('rate');
    expectFold(ledger);
    await ledger.close();
  });

  it("a child's own rate is an extra window; the wait is the longest along the chain", async () => {
    const { ledger, clock } = await rateLedger();
    const root = await issueRated(ledger, clock, { calls: 3, windowMs: 1_000 });
    const child = await ledger.attenuate(root.token, { budget: { rate: { calls: 1, windowMs: 100 } } });
    if (child.status !== 'issued') throw new Error(child.reason);
    expect(last(ledger)).toMatchObject({ scope: { budget: { rate: { calls: 1, windowMs: 100 } } } });
    expect(await ledger.invoke(child.token, 'search', {})).toMatchObject({ status: 'completed' });
    clock.advance(50);
    expect(await ledger.invoke(child.token, 'search', {})).toMatchObject({ reason: 'rate_limited', retryAfterMs: 50 });
    clock.advance(50);
    expect(await ledger.invoke(child.token, 'search', {})).toMatchObject({ status: 'completed' });
    clock.advance(100);
    expect(await ledger.invoke(child.token, 'search', {})).toMatchObject({ status: 'completed' });
    clock.advance(100);
    // the root's window (3 in 1 s) is full now, the child's (1 in 100 ms) is not: the root's wait decides
    expect(await ledger.invoke(child.token, 'search', {})).toMatchObject({ reason: 'rate_limited', retryAfterMs: 700 });
    // a rate wider than the parent's is still only an extra window: never widens
    expect(await ledger.attenuate(root.token, { budget: { rate: { calls: 1_000, windowMs: 1 } } })).toMatchObject({ status: 'issued' });
    expectFold(ledger);
    await ledger.close();
  });
});

describe('verify re-decides rate windows', () => {
  it('an admission inside a full window is a decision problem, even rehashed', async () => {
    const { ledger, clock } = await rateLedger();
    const { token } = await issueRated(ledger, clock, { calls: 1, windowMs: 1_000 });
    await ledger.invoke(token, 'search', {});
    clock.advance(1_000);
    await ledger.invoke(token, 'search', {});
    const events = ledger.events().map((e) => JSON.parse(JSON.stringify(e)) as LedgerEvent);
    await ledger.close();
    expect(verify(events).ok).toBe(true);
    // move the second admission (and what follows) back into the first one's window
    const i = events.findIndex((e, k) => e.type === 'call.admitted' && k > events.findIndex((f) => f.type === 'call.admitted'));
    const out: LedgerEvent[] = events.slice(0, i);
    for (let k = i; k < events.length; k++) {
      const { seq: _s, at, prevHash: _p, hash: _h, ...payload } = events[k] as unknown as Record<string, unknown>;
      const prev = out[out.length - 1] as LedgerEvent;
      out.push(sealEvent(payload as never, (at as number) - 1, { seq: prev.seq, hash: prev.hash }));
    }
    expect(verify(out).problems[0]).toMatchObject({ code: 'decision', seq: i + 1 });
  });

  it('a rate_limited rejection with a different retryAfterMs is a decision problem', async () => {
    const { ledger, clock } = await rateLedger();
    const { token } = await issueRated(ledger, clock, { calls: 1, windowMs: 1_000 });
    await ledger.invoke(token, 'search', {});
    await ledger.invoke(token, 'search', {});
    const events = ledger.events().map((e) => JSON.parse(JSON.stringify(e)) as Record<string, unknown>);
    await ledger.close();
    const i = events.length - 1;
    const { seq: _s, at, prevHash: _p, hash: _h, ...payload } = events[i] as Record<string, unknown>;
    const prev = events[i - 1] as unknown as LedgerEvent;
    const edited = [...(events.slice(0, i) as unknown as LedgerEvent[]), sealEvent({ ...(payload as object), retryAfterMs: 5 } as never, at as number, { seq: prev.seq, hash: prev.hash })];
    expect(verify(edited).problems[0]).toMatchObject({ code: 'decision', seq: i + 1 });
  });
});

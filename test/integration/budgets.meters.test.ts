import { createLedger, replay, verify, sealEvent, type Ledger, type LedgerEvent, type LedgerOptions } from '../../src';
import { manualClock } from '../support/fixtures';

const minute = 60_000;

/**
 * A ledger with `llm.complete`: it declares `maxUsd` as its cost and, when asked, reports `usedUsd`
 * (and whatever `extra` says) through ctx.report; `fail` makes it throw after reporting.
 */
async function meteredLedger(options: LedgerOptions = {}) {
  const clock = manualClock();
  const ledger = createLedger({ clock: clock.now, ...options });
  const runs: string[] = [];
  await ledger.registerTool<{ maxUsd: number; usedUsd?: number; extra?: { [m: string]: number }; fail?: boolean }>({
    name: 'llm.complete',
    inputSchema: {
      type: 'object',
      properties: { maxUsd: { type: 'integer' }, usedUsd: { type: 'integer' }, extra: { type: 'object' }, fail: { type: 'boolean' } },
      required: ['maxUsd'],
    },
    cost: (args) => ({ usd_micros: args.maxUsd }),
    run: (args, ctx) => {
      runs.push('llm.complete');
      if (args.usedUsd !== undefined || args.extra !== undefined) ctx.report({ ...(args.usedUsd !== undefined ? { usd_micros: args.usedUsd } : {}), ...(args.extra ?? {}) });
      if (args.fail === true) throw new Error('upstream failed');
      return 'done';
    },
  });
  await ledger.registerTool({ name: 'free.echo', inputSchema: { type: 'object' }, run: () => 'echo' });
  return { clock, ledger, runs };
}

async function issueUsd(ledger: Ledger, clock: { now: () => number }, usd: number, extra: { [m: string]: number } = {}) {
  return ledger.issue({ tools: ['llm.complete', 'free.echo'], expiresAt: clock.now() + 10 * minute, budget: { calls: 100, inputBytes: 100_000, meters: { usd_micros: usd, ...extra } } });
}

const last = (ledger: Ledger): LedgerEvent => ledger.events()[ledger.events().length - 1] as LedgerEvent;
const ofType = (ledger: Ledger, type: LedgerEvent['type']) => ledger.events().filter((e) => e.type === type);

function expectFold(ledger: Ledger): void {
  expect(verify(ledger.events())).toMatchObject({ ok: true, problems: [] });
  expect(replay(ledger.events())).toEqual(ledger.state());
}

describe('budget.meters on issue', () => {
  it.each([
    ['not an object', 5, 'budget.meters must be an object of meter names to non-negative safe integers'],
    ['an array', [1], 'budget.meters must be an object of meter names to non-negative safe integers'],
    ['a name with a capital', { Usd: 1 }, 'budget.meters: meter names must match'],
    ['a name with a space', { 'usd micros': 1 }, 'budget.meters: meter names must match'],
    ['a name of 65 characters', { ['a'.repeat(65)]: 1 }, 'budget.meters: meter names must match'],
    ['a negative amount', { usd_micros: -1 }, 'budget.meters.usd_micros must be a non-negative safe integer'],
    ['a fractional amount', { usd_micros: 0.5 }, 'budget.meters.usd_micros must be a non-negative safe integer'],
    ['an amount beyond safe integers', { usd_micros: 2 ** 53 }, 'budget.meters.usd_micros must be a non-negative safe integer'],
    ['a string amount', { usd_micros: '5' }, 'budget.meters.usd_micros must be a non-negative safe integer'],
    ['17 meters', Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`m${i}`, 1])), 'budget.meters may name at most 16 meters'],
  ])('refuses %s, naming the field, appending nothing', async (_what, meters, message) => {
    const { ledger, clock } = await meteredLedger();
    const length = ledger.events().length;
    await expect(ledger.issue({ tools: ['llm.complete'], expiresAt: clock.now() + minute, budget: { calls: 1, inputBytes: 100, meters: meters as never } })).rejects.toThrow(message);
    expect(ledger.events()).toHaveLength(length);
    await ledger.close();
  });

  it('refuses an unknown budget field rather than ignoring it', async () => {
    const { ledger, clock } = await meteredLedger();
    await expect(ledger.issue({ tools: ['llm.complete'], expiresAt: clock.now() + minute, budget: { calls: 1, inputBytes: 100, dollars: 5 } as never })).rejects.toThrow('budget may hold only calls, inputBytes, meters and rate');
    await ledger.close();
  });

  it('takes 16 meters, a meter named like an Object member, and 0 as a cap', async () => {
    const { ledger, clock } = await meteredLedger();
    const meters = { ...Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`m${i}`, 1])), constructor: 0 };
    const { grantId } = await ledger.issue({ tools: ['llm.complete'], expiresAt: clock.now() + minute, budget: { calls: 1, inputBytes: 100, meters } });
    expect(ledger.usage(grantId).meters?.constructor).toEqual({ limit: 0, used: 0 });
    expectFold(ledger);
    await ledger.close();
  });

  it('registerTool refuses a cost that is not a function', async () => {
    const { ledger } = await meteredLedger();
    await expect(ledger.registerTool({ name: 'bad.cost', inputSchema: { type: 'object' }, cost: 5 as never, run: () => 1 })).rejects.toThrow('cost must be a function');
    await ledger.close();
  });
});

describe('two-phase meters on a call', () => {
  it('reserves the cost before the tool runs, in call.admitted and in usage while the call is in flight', async () => {
    const clock = manualClock();
    const ledger = createLedger({ clock: clock.now });
    let seenDuringRun: unknown;
    await ledger.registerTool({
      name: 'llm.complete',
      inputSchema: { type: 'object' },
      cost: () => ({ usd_micros: 40_000 }),
      run: () => {
        seenDuringRun = ledger.usage(grantId).meters;
        return 'ok';
      },
    });
    const { grantId, token } = await ledger.issue({ tools: ['llm.complete'], expiresAt: clock.now() + minute, budget: { calls: 5, inputBytes: 1_000, meters: { usd_micros: 100_000 } } });
    await ledger.invoke(token, 'llm.complete', {});
    expect(seenDuringRun).toEqual({ usd_micros: { limit: 100_000, used: 40_000 } });
    expect(ofType(ledger, 'call.admitted')[0]).toMatchObject({ reserved: { calls: 1, inputBytes: 2, meters: { usd_micros: 40_000 } } });
    await ledger.close();
  });

  it('settles at the reported amount and releases the rest (call.completed carries charged)', async () => {
    const { ledger, clock } = await meteredLedger();
    const { grantId, token } = await issueUsd(ledger, clock, 100_000);
    expect(await ledger.invoke(token, 'llm.complete', { maxUsd: 40_000, usedUsd: 1_200 })).toMatchObject({ status: 'completed', value: 'done' });
    expect(last(ledger)).toMatchObject({ type: 'call.completed', charged: { usd_micros: 1_200 } });
    expect(last(ledger)).not.toHaveProperty('overrun');
    expect(ledger.usage(grantId).meters).toEqual({ usd_micros: { limit: 100_000, used: 1_200 } });
    expectFold(ledger);
    await ledger.close();
  });

  it('charges the whole reservation when the tool reports nothing', async () => {
    const { ledger, clock } = await meteredLedger();
    const { grantId, token } = await issueUsd(ledger, clock, 100_000);
    await ledger.invoke(token, 'llm.complete', { maxUsd: 40_000 });
    expect(last(ledger)).toMatchObject({ type: 'call.completed', charged: { usd_micros: 40_000 } });
    expect(ledger.usage(grantId).meters?.usd_micros?.used).toBe(40_000);
    await ledger.close();
  });

  it('charges the reservation, never more, and flags overrun when the report is above it', async () => {
    const { ledger, clock } = await meteredLedger();
    const { grantId, token } = await issueUsd(ledger, clock, 100_000);
    await ledger.invoke(token, 'llm.complete', { maxUsd: 40_000, usedUsd: 90_000 });
    expect(last(ledger)).toMatchObject({ type: 'call.completed', charged: { usd_micros: 40_000 }, overrun: true });
    expect(ledger.usage(grantId).meters?.usd_micros?.used).toBe(40_000);
    expectFold(ledger);
    await ledger.close();
  });

  it('ignores a reported meter that was not reserved, and flags the settlement overrun', async () => {
    const { ledger, clock } = await meteredLedger();
    const { grantId, token } = await issueUsd(ledger, clock, 100_000, { tokens: 1_000 });
    await ledger.invoke(token, 'llm.complete', { maxUsd: 40_000, usedUsd: 10, extra: { tokens: 500 } });
    expect(last(ledger)).toMatchObject({ type: 'call.completed', charged: { usd_micros: 10 }, overrun: true });
    expect(last(ledger)).not.toHaveProperty('charged.tokens');
    expect(ledger.usage(grantId).meters).toEqual({ usd_micros: { limit: 100_000, used: 10 }, tokens: { limit: 1_000, used: 0 } });
    expectFold(ledger);
    await ledger.close();
  });

  it('the last report counts, and a report after the tool returned is refused and changes nothing', async () => {
    const clock = manualClock();
    const ledger = createLedger({ clock: clock.now });
    let late: (() => void) | undefined;
    await ledger.registerTool({
      name: 'llm.complete',
      inputSchema: { type: 'object' },
      cost: () => ({ usd_micros: 1_000 }),
      run: (_args, ctx) => {
        ctx.report({ usd_micros: 900 });
        ctx.report({ usd_micros: 300 });
        late = () => ctx.report({ usd_micros: 1 });
        return 'ok';
      },
    });
    const { grantId, token } = await ledger.issue({ tools: ['llm.complete'], expiresAt: clock.now() + minute, budget: { calls: 5, inputBytes: 1_000, meters: { usd_micros: 10_000 } } });
    await ledger.invoke(token, 'llm.complete', {});
    expect(late as () => void).toThrow(expect.objectContaining({ name: 'ResourceRefusedError', code: 'call_not_running' }));
    expect(last(ledger)).toMatchObject({ type: 'call.completed', charged: { usd_micros: 300 } });
    expect(ledger.usage(grantId).meters?.usd_micros?.used).toBe(300);
    await ledger.close();
  });

  it('a malformed report throws TypeError inside the tool: the call fails and is charged its reservation', async () => {
    const clock = manualClock();
    const ledger = createLedger({ clock: clock.now });
    await ledger.registerTool({ name: 'llm.complete', inputSchema: { type: 'object' }, cost: () => ({ usd_micros: 1_000 }), run: (_a, ctx) => ctx.report({ usd_micros: 1.5 }) });
    const { grantId, token } = await ledger.issue({ tools: ['llm.complete'], expiresAt: clock.now() + minute, budget: { calls: 5, inputBytes: 1_000, meters: { usd_micros: 10_000 } } });
    const outcome = await ledger.invoke(token, 'llm.complete', {});
    expect(outcome).toMatchObject({ status: 'failed', error: expect.any(TypeError) });
    expect(last(ledger)).toMatchObject({ type: 'call.failed', charged: { usd_micros: 1_000 } });
    expect(ledger.usage(grantId).meters?.usd_micros?.used).toBe(1_000);
    await ledger.close();
  });

  it("onToolError 'consume' charges a failed call what it reported; 'refund' gives its meters back too", async () => {
    for (const onToolError of ['consume', 'refund'] as const) {
      const { ledger, clock } = await meteredLedger({ onToolError });
      const { grantId, token } = await issueUsd(ledger, clock, 100_000);
      expect(await ledger.invoke(token, 'llm.complete', { maxUsd: 40_000, usedUsd: 5_000, fail: true })).toMatchObject({ status: 'failed' });
      const expected = onToolError === 'refund' ? 0 : 5_000;
      expect(last(ledger)).toMatchObject({ type: 'call.failed', charged: { usd_micros: expected } });
      expect(ledger.usage(grantId).meters?.usd_micros?.used).toBe(expected);
      expect(ledger.usage(grantId).calls.used).toBe(onToolError === 'refund' ? 0 : 1);
      expectFold(ledger);
      await ledger.close();
    }
  });

  it('a tool without cost reserves nothing on any meter, and its settlement carries no charge', async () => {
    const { ledger, clock } = await meteredLedger();
    const { grantId, token } = await issueUsd(ledger, clock, 0);
    expect(await ledger.invoke(token, 'free.echo', {})).toMatchObject({ status: 'completed' });
    expect(ofType(ledger, 'call.admitted')[0]).toMatchObject({ reserved: { calls: 1, inputBytes: 2 } });
    expect(ofType(ledger, 'call.admitted')[0]).not.toHaveProperty('reserved.meters');
    expect(last(ledger)).not.toHaveProperty('charged');
    expect(ledger.usage(grantId).meters).toEqual({ usd_micros: { limit: 0, used: 0 } });
    await ledger.close();
  });

  it('a cost on a grant without that meter reserves it in the event and limits nothing', async () => {
    const { ledger, clock } = await meteredLedger();
    const { grantId, token } = await ledger.issue({ tools: ['llm.complete'], expiresAt: clock.now() + minute, budget: { calls: 5, inputBytes: 1_000 } });
    expect(await ledger.invoke(token, 'llm.complete', { maxUsd: 10 ** 12, usedUsd: 7 })).toMatchObject({ status: 'completed' });
    expect(last(ledger)).toMatchObject({ type: 'call.completed', charged: { usd_micros: 7 } });
    expect(ledger.usage(grantId)).not.toHaveProperty('meters');
    expectFold(ledger);
    await ledger.close();
  });
});

describe('meter_budget_exhausted', () => {
  it('refuses a call whose cost the meter cannot cover, names the meter in the event and the outcome, runs nothing', async () => {
    const { ledger, clock, runs } = await meteredLedger();
    const { grantId, token } = await issueUsd(ledger, clock, 50_000);
    expect(await ledger.invoke(token, 'llm.complete', { maxUsd: 40_000, usedUsd: 30_000 })).toMatchObject({ status: 'completed' });
    const before = ledger.state().grants;
    const outcome = await ledger.invoke(token, 'llm.complete', { maxUsd: 20_001 });
    expect(outcome).toMatchObject({ status: 'rejected', reason: 'meter_budget_exhausted', meter: 'usd_micros' });
    expect(last(ledger)).toMatchObject({ type: 'call.rejected', reason: 'meter_budget_exhausted', meter: 'usd_micros', cost: { usd_micros: 20_001 } });
    expect(ledger.state().grants).toBe(before);
    expect(runs).toEqual(['llm.complete']);
    expect(await ledger.invoke(token, 'llm.complete', { maxUsd: 20_000 })).toMatchObject({ status: 'completed' });
    expect(ledger.usage(grantId).meters?.usd_micros?.used).toBe(50_000);
    expectFold(ledger);
    await ledger.close();
  });

  it('counts in-flight reservations: a second concurrent call cannot take what the first reserved', async () => {
    const clock = manualClock();
    const ledger = createLedger({ clock: clock.now });
    let release: (() => void) | undefined;
    await ledger.registerTool({ name: 'slow', inputSchema: { type: 'object' }, cost: () => ({ usd_micros: 60 }), run: () => new Promise<string>((r) => (release = () => r('ok'))) });
    const { token } = await ledger.issue({ tools: ['slow'], expiresAt: clock.now() + minute, budget: { calls: 5, inputBytes: 1_000, meters: { usd_micros: 100 } } });
    const first = ledger.invoke(token, 'slow', {});
    await new Promise((r) => setImmediate(r));
    expect(await ledger.invoke(token, 'slow', {})).toMatchObject({ status: 'rejected', reason: 'meter_budget_exhausted' });
    (release as () => void)();
    expect(await first).toMatchObject({ status: 'completed' });
    await ledger.close();
  });

  it('checks meters in name order: the first meter that cannot cover is named', async () => {
    const clock = manualClock();
    const ledger = createLedger({ clock: clock.now });
    await ledger.registerTool({ name: 't', inputSchema: { type: 'object' }, cost: () => ({ zeta: 5, alpha: 5, mid: 5 }), run: () => 1 });
    const { token } = await ledger.issue({ tools: ['t'], expiresAt: clock.now() + minute, budget: { calls: 5, inputBytes: 1_000, meters: { zeta: 1, mid: 1, alpha: 10 } } });
    expect(await ledger.invoke(token, 't', {})).toMatchObject({ reason: 'meter_budget_exhausted', meter: 'mid' });
    await ledger.close();
  });

  it('comes after the call and byte budgets in precedence', async () => {
    const { ledger, clock } = await meteredLedger();
    const { token } = await ledger.issue({ tools: ['llm.complete'], expiresAt: clock.now() + minute, budget: { calls: 0, inputBytes: 1_000, meters: { usd_micros: 0 } } });
    expect(await ledger.invoke(token, 'llm.complete', { maxUsd: 1 })).toMatchObject({ reason: 'call_budget_exhausted' });
    await ledger.close();
  });

  it.each([
    ['throws', () => { throw new Error('no price'); }],
    ['returns a fraction', () => ({ usd_micros: 0.5 })],
    ['returns a negative', () => ({ usd_micros: -1 })],
    ['returns a bad meter name', () => ({ 'USD': 1 })],
    ['returns a number', () => 5],
    ['returns null', () => null],
  ])('a cost that %s refuses the call invalid_arguments (fail closed) without running it', async (_what, cost) => {
    const clock = manualClock();
    const ledger = createLedger({ clock: clock.now });
    const runs: number[] = [];
    await ledger.registerTool({ name: 't', inputSchema: { type: 'object' }, cost: cost as never, run: () => runs.push(1) });
    const { token } = await ledger.issue({ tools: ['t'], expiresAt: clock.now() + minute, budget: { calls: 5, inputBytes: 1_000, meters: { usd_micros: 10 } } });
    expect(await ledger.invoke(token, 't', {})).toMatchObject({ status: 'rejected', reason: 'invalid_arguments' });
    expect(runs).toEqual([]);
    expectFold(ledger);
    await ledger.close();
  });

  it('an empty cost reserves nothing (the event has no meters)', async () => {
    const clock = manualClock();
    const ledger = createLedger({ clock: clock.now });
    await ledger.registerTool({ name: 't', inputSchema: { type: 'object' }, cost: () => ({}), run: () => 1 });
    const { token } = await ledger.issue({ tools: ['t'], expiresAt: clock.now() + minute, budget: { calls: 5, inputBytes: 1_000, meters: { usd_micros: 0 } } });
    expect(await ledger.invoke(token, 't', {})).toMatchObject({ status: 'completed' });
    expect(ofType(ledger, 'call.admitted')[0]).not.toHaveProperty('reserved.meters');
    await ledger.close();
  });
});

describe('meters along a delegation chain', () => {
  it("a child's metered call reserves on the root and settles on both; usage(root) counts it", async () => {
    const { ledger, clock } = await meteredLedger();
    const root = await issueUsd(ledger, clock, 100_000);
    const child = await ledger.attenuate(root.token, { budget: { meters: { usd_micros: 30_000 } } });
    if (child.status !== 'issued') throw new Error(child.reason);
    expect(last(ledger)).toMatchObject({ type: 'grant.issued', parentLeft: { meters: { usd_micros: 100_000 } }, scope: { budget: { meters: { usd_micros: 30_000 } } } });
    await ledger.invoke(child.token, 'llm.complete', { maxUsd: 20_000, usedUsd: 4_000 });
    expect(ledger.usage(root.grantId).meters?.usd_micros?.used).toBe(4_000);
    expect(ledger.usage(child.grantId).meters?.usd_micros?.used).toBe(4_000);
    expect(await ledger.invoke(child.token, 'llm.complete', { maxUsd: 26_001 })).toMatchObject({ reason: 'meter_budget_exhausted', meter: 'usd_micros' });
    expectFold(ledger);
    await ledger.close();
  });

  it("the root's meter refuses a child's call even when the child's own cap would allow it", async () => {
    const { ledger, clock } = await meteredLedger();
    const root = await issueUsd(ledger, clock, 100_000);
    const child = await ledger.attenuate(root.token, {});
    if (child.status !== 'issued') throw new Error(child.reason);
    // The root spends directly; the child's cap was what the root had left when it was issued.
    await ledger.invoke(root.token, 'llm.complete', { maxUsd: 90_000 });
    expect(ledger.usage(child.grantId).meters?.usd_micros?.limit).toBe(100_000);
    expect(await ledger.invoke(child.token, 'llm.complete', { maxUsd: 10_001 })).toMatchObject({ reason: 'meter_budget_exhausted' });
    expect(await ledger.invoke(child.token, 'llm.complete', { maxUsd: 10_000 })).toMatchObject({ status: 'completed' });
    expect(ledger.usage(root.grantId).meters?.usd_micros?.used).toBe(100_000);
    expectFold(ledger);
    await ledger.close();
  });

  it('attenuate: a meter above what the chain has left now widens; one the parent lacks is the child’s own cap', async () => {
    const { ledger, clock } = await meteredLedger();
    const root = await issueUsd(ledger, clock, 100_000);
    await ledger.invoke(root.token, 'llm.complete', { maxUsd: 60_000 });
    expect(await ledger.attenuate(root.token, { budget: { meters: { usd_micros: 40_001 } } })).toMatchObject({ status: 'rejected', reason: 'attenuation_widens' });
    const ok = await ledger.attenuate(root.token, { budget: { meters: { usd_micros: 40_000, tokens: 7 } } });
    expect(ok).toMatchObject({ status: 'issued' });
    expect(last(ledger)).toMatchObject({ parentLeft: { meters: { usd_micros: 40_000 } }, scope: { budget: { meters: { usd_micros: 40_000, tokens: 7 } } } });
    expectFold(ledger);
    await ledger.close();
  });

  it('a refund gives meters back along the whole chain', async () => {
    const { ledger, clock } = await meteredLedger({ onToolError: 'refund' });
    const root = await issueUsd(ledger, clock, 100_000);
    const child = await ledger.attenuate(root.token, {});
    if (child.status !== 'issued') throw new Error(child.reason);
    await ledger.invoke(child.token, 'llm.complete', { maxUsd: 50_000, fail: true });
    expect(ledger.usage(root.grantId).meters?.usd_micros?.used).toBe(0);
    expect(ledger.usage(child.grantId).meters?.usd_micros?.used).toBe(0);
    expectFold(ledger);
    await ledger.close();
  });
});

describe('verify re-decides meters', () => {
  async function meteredLog() {
    const { ledger, clock } = await meteredLedger();
    const { token } = await issueUsd(ledger, clock, 100_000);
    await ledger.invoke(token, 'llm.complete', { maxUsd: 40_000, usedUsd: 1_200 });
    const events = ledger.events().map((e) => JSON.parse(JSON.stringify(e)) as LedgerEvent);
    await ledger.close();
    return events;
  }

  /** Replaces the event at `index` by `edit(event)` and re-seals the chain from there (a forger who rehashes). */
  function forged(events: readonly LedgerEvent[], index: number, edit: (e: Record<string, unknown>) => void): LedgerEvent[] {
    const out: LedgerEvent[] = events.slice(0, index);
    for (let i = index; i < events.length; i++) {
      const { seq: _s, at, prevHash: _p, hash: _h, ...payload } = JSON.parse(JSON.stringify(events[i])) as Record<string, unknown>;
      if (i === index) edit(payload);
      const head = out.length === 0 ? { seq: 0, hash: '0'.repeat(64) } : { seq: (out[out.length - 1] as LedgerEvent).seq, hash: (out[out.length - 1] as LedgerEvent).hash };
      out.push(sealEvent(payload as never, at as number, head));
    }
    return out;
  }

  it('a charge above the reservation is a decision problem even when the chain is rehashed', async () => {
    const events = await meteredLog();
    const i = events.findIndex((e) => e.type === 'call.completed');
    const result = verify(forged(events, i, (e) => ((e.charged as Record<string, number>).usd_micros = 40_001)));
    expect(result.ok).toBe(false);
    expect(result.problems[0]).toMatchObject({ code: 'decision', seq: i + 1 });
  });

  it('a charge on a meter that was not reserved is a decision problem', async () => {
    const events = await meteredLog();
    const i = events.findIndex((e) => e.type === 'call.completed');
    expect(verify(forged(events, i, (e) => ((e.charged as Record<string, number>).tokens = 1))).ok).toBe(false);
  });

  it('dropping the charge from a metered settlement is a decision problem', async () => {
    const events = await meteredLog();
    const i = events.findIndex((e) => e.type === 'call.completed');
    expect(verify(forged(events, i, (e) => delete e.charged)).ok).toBe(false);
  });

  it('an admission whose reservation the meter could not cover is a decision problem', async () => {
    const events = await meteredLog();
    const i = events.findIndex((e) => e.type === 'call.admitted');
    expect(verify(forged(events, i, (e) => ((e.reserved as { meters: Record<string, number> }).meters.usd_micros = 100_001))).problems[0]).toMatchObject({ code: 'decision', seq: i + 1 });
  });

  it('a malformed meter map in an event is malformed, not a throw', async () => {
    const events = await meteredLog();
    const i = events.findIndex((e) => e.type === 'call.admitted');
    expect(verify(forged(events, i, (e) => ((e.reserved as { meters: Record<string, unknown> }).meters.usd_micros = 1.5))).problems[0]).toMatchObject({ code: 'malformed' });
    expect(verify(forged(events, i, (e) => ((e.reserved as { meters: Record<string, unknown> }).meters = { __proto__x: 1 }))).problems[0]).toMatchObject({ code: 'malformed' });
  });
});

describe('a metered settlement the store could not take', () => {
  it('keeps the report with the kept settlement: the next open charges what the tool reported', async () => {
    const { memoryStore } = await import('../../src');
    const inner = memoryStore();
    let down = false;
    let appends = 0;
    const store = {
      load: () => inner.load(),
      append(events: readonly LedgerEvent[]) {
        appends++;
        if (down) throw new Error('store down');
        inner.append(events);
      },
    };
    const clock = manualClock();
    const first = createLedger({ store, clock: clock.now });
    const tool = (run: (a: unknown, ctx: { report: (u: { [m: string]: number }) => void }) => unknown) => ({ name: 'llm', inputSchema: { type: 'object' }, cost: () => ({ usd_micros: 1_000 }), run });
    await first.registerTool(
      tool((_a, ctx) => {
        ctx.report({ usd_micros: 250 });
        down = true;
        return 'done';
      }),
    );
    const { grantId, token } = await first.issue({ tools: ['llm'], expiresAt: clock.now() + minute, budget: { calls: 5, inputBytes: 1_000, meters: { usd_micros: 10_000 } } });
    const pending = first.invoke(token, 'llm', {});
    while (!(first.inFlight().length === 1 && appends > 4)) await new Promise((r) => setTimeout(r, 2));
    await first.close();
    await expect(pending).resolves.toMatchObject({ status: 'completed' });
    down = false;
    const second = createLedger({ store, clock: clock.now });
    await second.registerTool(tool(() => 'again'));
    expect(second.events().filter((e) => e.type === 'call.completed')).toMatchObject([{ charged: { usd_micros: 250 } }]);
    expect(second.usage(grantId).meters).toEqual({ usd_micros: { limit: 10_000, used: 250 } });
    expect(verify(second.events()).ok).toBe(true);
    await second.close();
  });
});

import { isDeepStrictEqual } from 'node:util';
import { openLedger, replay, verify, type Ledger } from '../src';
import { describePg, freshSchema } from './support/pgTest';
import { hour, pgLedger, pgStore } from './support/pgLedger';
import { manualClock } from './support/fixtures';

// Meters used and rate-window times live in the grant records: a PostgreSQL snapshot must carry
// them, as the SQLite one does (test/budgets.sqlite.test.ts).
describePg('budgets on the PostgreSQL store', () => {
  const register = (ledger: Ledger) =>
    ledger.registerTool<{ used: number }>({
      name: 'llm.complete',
      inputSchema: { type: 'object', properties: { used: { type: 'integer' } }, required: ['used'] },
      cost: () => ({ usd_micros: 1_000 }),
      run: (args, ctx) => ctx.report({ usd_micros: args.used }),
    });

  it('a snapshot round-trips meters used and rate windows, and the reopened ledger decides from them', async () => {
    const schema = freshSchema();
    const clock = manualClock();
    const first = await openLedger({ clock: clock.now, store: pgStore(schema, { snapshotEvery: 4 }) });
    await register(first);
    const root = await first.issue({ tools: ['llm.complete'], expiresAt: clock.now() + hour, budget: { calls: 100, inputBytes: 100_000, meters: { usd_micros: 10_000 }, rate: { calls: 5, windowMs: 60_000 } } });
    const child = await first.attenuate(root.token, { budget: { meters: { usd_micros: 5_000 }, rate: { calls: 2, windowMs: 1_000 } } });
    if (child.status !== 'issued') throw new Error(child.reason);
    for (let i = 0; i < 4; i++) {
      clock.advance(10);
      await first.invoke(i % 2 === 0 ? root.token : child.token, 'llm.complete', { used: 100 * (i + 1) });
    }
    await first.close();

    const store = pgStore(schema);
    const second = await openLedger({ clock: clock.now, store });
    expect(store.openedFromSnapshotSeq).toBeGreaterThan(0);
    await register(second);
    expect(isDeepStrictEqual(second.state(), replay(second.events()))).toBe(true);
    expect(second.usage(root.grantId).meters).toEqual({ usd_micros: { limit: 10_000, used: 1_000 } });
    expect(second.usage(root.grantId).rate).toEqual({ limit: 5, windowMs: 60_000, inWindow: 4 });
    clock.advance(10);
    expect(await second.invoke(root.token, 'llm.complete', { used: 1 })).toMatchObject({ status: 'completed' });
    expect(await second.invoke(child.token, 'llm.complete', { used: 1 })).toMatchObject({ status: 'rejected', reason: 'rate_limited', retryAfterMs: 59_960 });
    expect(verify(second.events()).ok).toBe(true);
    await second.close();
  });

  it('two ledgers on one schema share a meter: neither can reserve what the other holds', async () => {
    const schema = freshSchema();
    const a = await pgLedger(schema);
    const b = await pgLedger(schema);
    let release: (() => void) | undefined;
    await a.registerTool({ name: 'slow', inputSchema: { type: 'object' }, cost: () => ({ usd_micros: 60 }), run: () => new Promise<string>((r) => (release = () => r('ok'))) });
    await b.registerTool({ name: 'slow', inputSchema: { type: 'object' }, cost: () => ({ usd_micros: 60 }), run: () => 'ok' });
    const { token, grantId } = await a.issue({ tools: ['slow'], expiresAt: Date.now() + hour, budget: { calls: 10, inputBytes: 1_000, meters: { usd_micros: 100 } } });
    const held = a.invoke(token, 'slow', {});
    while (release === undefined) await new Promise((r) => setTimeout(r, 5));
    expect(await b.invoke(token, 'slow', {})).toMatchObject({ status: 'rejected', reason: 'meter_budget_exhausted', meter: 'usd_micros' });
    release();
    expect(await held).toMatchObject({ status: 'completed' });
    expect(await b.invoke(token, 'slow', {})).toMatchObject({ status: 'rejected', reason: 'meter_budget_exhausted' });
    expect(b.usage(grantId).meters).toEqual({ usd_micros: { limit: 100, used: 60 } });
    await a.close();
    await b.close();
  });
});

import { isDeepStrictEqual } from 'node:util';
import { createLedger, replay, sqliteStore, verify } from '../src';
import { manualClock } from './support/fixtures';
import { sqliteTempDir } from './support/sqliteFiles';

const tmp = sqliteTempDir();
afterAll(() => tmp.cleanup());

// Meters used and rate-window times live in the grant records: a SQLite snapshot must carry them,
// so a ledger reopened from one decides exactly as the full fold would.
it('a SQLite snapshot round-trips meters used and rate windows, and the reopened ledger decides from them', async () => {
  const file = tmp.file('budgets.sqlite');
  const clock = manualClock();
  const register = async (ledger: ReturnType<typeof createLedger>) =>
    ledger.registerTool<{ used: number }>({
      name: 'llm.complete',
      inputSchema: { type: 'object', properties: { used: { type: 'integer' } }, required: ['used'] },
      cost: () => ({ usd_micros: 1_000 }),
      run: (args, ctx) => ctx.report({ usd_micros: args.used }),
    });
  const first = createLedger({ clock: clock.now, store: sqliteStore({ path: file, snapshotEvery: 4 }) });
  await register(first);
  const root = await first.issue({ tools: ['llm.complete'], expiresAt: clock.now() + 3_600_000, budget: { calls: 100, inputBytes: 100_000, meters: { usd_micros: 10_000 }, rate: { calls: 5, windowMs: 60_000 } } });
  const child = await first.attenuate(root.token, { budget: { meters: { usd_micros: 5_000 }, rate: { calls: 2, windowMs: 1_000 } } });
  if (child.status !== 'issued') throw new Error(child.reason);
  for (let i = 0; i < 4; i++) {
    clock.advance(10);
    await first.invoke(i % 2 === 0 ? root.token : child.token, 'llm.complete', { used: 100 * (i + 1) });
  }
  await first.close();

  const store = sqliteStore({ path: file, snapshotEvery: 0 });
  const second = createLedger({ clock: clock.now, store });
  expect(store.openedFromSnapshotSeq).toBeGreaterThan(0);
  await register(second);
  expect(isDeepStrictEqual(second.state(), replay(second.events()))).toBe(true);
  expect(second.usage(root.grantId).meters).toEqual({ usd_micros: { limit: 10_000, used: 1_000 } });
  expect(second.usage(root.grantId).rate).toEqual({ limit: 5, windowMs: 60_000, inWindow: 4 });
  clock.advance(10);
  expect(await second.invoke(root.token, 'llm.complete', { used: 1 })).toMatchObject({ status: 'completed' });
  expect(await second.invoke(child.token, 'llm.complete', { used: 1 })).toMatchObject({ status: 'rejected', reason: 'rate_limited', retryAfterMs: 60_000 - 50 + 10 });
  expect(verify(second.events()).ok).toBe(true);
  await second.close();
});

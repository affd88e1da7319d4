import { Pool, type PoolClient } from 'pg';
import { openLedger, verify, type Ledger } from '../../src';
import { postgresStore, type PostgresEventStore } from '../../src/postgres';
import { flushWalStatement, headStatement, readAfterStatement, type PostgresTables } from '../../src/stores/postgres/postgresLocking';
import { insertBatchIfHeadStatement } from '../../src/stores/postgres/postgresAppend';
import { sealEvent } from '../../src/domain/chain';
import { rowOf } from '../../src/stores/shared/eventRows';
import { echoTool, hour } from '../support/pgLedger';
import { adminPool, describePg, freshSchema, url } from '../support/pgTest';

/** A pool whose clients record the text of every query they send (the real driver, only observed). */
function recordingPool(): { pool: Pool; sent: string[] } {
  const sent: string[] = [];
  const pool = new Pool({ connectionString: url(), max: 2 });
  pool.on('error', () => undefined);
  pool.on('connect', (client: PoolClient) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      if (typeof args[0] === 'string') sent.push(args[0]);
      return query(...args);
    };
  });
  return { pool, sent };
}

/** The one-round-trip transaction: lock, conditional insert, asynchronous COMMIT, then the WAL flush outside the lock. */
const oneTrip = (text: string): boolean =>
  text.includes('.log_lock FOR UPDATE') && text.includes('WHERE coalesce((SELECT max(seq) FROM') && text.endsWith(`SET LOCAL synchronous_commit = off; COMMIT; ${flushWalStatement}`);
const lockAndRead = (text: string): boolean => text.includes('.log_lock FOR UPDATE') && !text.includes('INSERT');

/**
 * A store whose ledger never catches up on a timer, so that its view stays exactly what its own
 * transactions read: the interleavings below are then explicit, not timing.
 */
function quietStore(pool: Pool, schema: string): PostgresEventStore {
  const store = postgresStore({ pool, schema });
  Object.defineProperty(store, 'catchUpIntervalMs', { value: 2 ** 31 - 1 });
  return store;
}

describePg('the PostgreSQL write transaction', () => {
  const pools: Pool[] = [];
  afterAll(() => Promise.all(pools.map((p) => p.end())));
  const recorder = (): { pool: Pool; sent: string[] } => {
    const r = recordingPool();
    pools.push(r.pool);
    return r;
  };

  it('commits a batch in one round trip when no other writer appended since this ledger last looked', async () => {
    const { pool, sent } = recorder();
    const ledger = await openLedger({ store: quietStore(pool, freshSchema()) });
    await ledger.registerTool(echoTool);
    const { token } = await ledger.issue({ tools: ['echo'], expiresAt: Date.now() + hour, budget: { calls: 5, inputBytes: 1_000 } });
    sent.length = 0;
    expect(await ledger.invoke(token, 'echo', { text: 'a' })).toMatchObject({ status: 'completed' });
    // Admission and settlement: one message each, and nothing else reached the server.
    expect(sent).toHaveLength(2);
    expect(sent.every(oneTrip)).toBe(true);
    expect(verify(ledger.events())).toMatchObject({ ok: true, problems: [] });
    await ledger.close();
  });

  /**
   * A migrated log of 50,000 narrow events appended faster than autovacuum analyzes it (no
   * statistics yet), and how PostgreSQL plans a statement on it.
   */
  const logWithoutStatistics = async (): Promise<{ tables: PostgresTables; hash: string; planOf: (statement: string) => Promise<string> }> => {
    const schema = freshSchema('plan');
    const ledger = await openLedger({ store: quietStore(recorder().pool, schema) });
    await ledger.close();
    const admin = adminPool();
    pools.push(admin);
    const tables = { schema, events: `"${schema}".events`, head: `"${schema}".head`, snapshots: `"${schema}".snapshots`, logLock: `"${schema}".log_lock`, snapshotLock: `"${schema}".snapshot_lock` };
    const hash = 'a'.repeat(64);
    await admin.query(`INSERT INTO ${tables.events} (seq, type, at, hash, prev_hash, body) SELECT g, 'x', 0, '${hash}', '${hash}', '{}' FROM generate_series(1, 50000) AS g`);
    const planOf = async (statement: string): Promise<string> => (await admin.query(`EXPLAIN ${statement}`)).rows.map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN']).join('\n');
    return { tables, hash, planOf };
  };

  it('checks the head by the primary key, never by scanning the log, even before the log has statistics', async () => {
    const { tables, hash, planOf } = await logWithoutStatistics();
    const next = sealEvent({ type: 'grant.revoked', grantId: 'g', abortInFlight: false }, 0, { seq: 50_000, hash });
    const plan = await planOf(insertBatchIfHeadStatement(tables.events, 50_000, hash, [rowOf(next)]));
    expect(plan).toContain('events_pkey');
    expect(plan).not.toMatch(/Seq Scan on events/);
  });

  it('reads the events after the head under the lock by the primary key, even before the log has statistics', async () => {
    const { tables, planOf } = await logWithoutStatistics();
    // What a write transaction reads once it holds the lock: the hash at its head, then what follows.
    for (const statement of [headStatement(tables, 49_990), readAfterStatement(tables, 49_990, undefined)]) {
      const plan = await planOf(statement);
      expect(plan).toContain('events_pkey');
      expect(plan).not.toMatch(/Seq Scan on events/);
    }
  });

  describe('when another host appended after this ledger last looked', () => {
    let a: Ledger;
    let b: Ledger;
    let sentByB: string[];
    let token: string;
    let grantId: string;

    beforeAll(async () => {
      const schema = freshSchema();
      a = await openLedger({ store: quietStore(recorder().pool, schema) });
      await a.registerTool(echoTool);
      ({ token, grantId } = await a.issue({ tools: ['echo'], expiresAt: Date.now() + hour, budget: { calls: 1, inputBytes: 1_000 } }));
      const recorded = recorder();
      sentByB = recorded.sent;
      // B opens knowing the grant; then A spends its only call, which B has not seen.
      b = await openLedger({ store: quietStore(recorded.pool, schema) });
      await b.registerTool(echoTool);
      expect(await a.invoke(token, 'echo', { text: 'a' })).toMatchObject({ status: 'completed' });
    });
    afterAll(async () => {
      await a.close();
      await b.close();
    });

    it('writes nothing it decided from the stale view, and decides again under the lock knowing the other host\'s events', async () => {
      sentByB.length = 0;
      const outcome = await b.invoke(token, 'echo', { text: 'b' });
      // From its own view B would have admitted the call; under the lock it sees the budget spent.
      expect(outcome).toMatchObject({ status: 'rejected', reason: 'call_budget_exhausted' });
      // The one-round-trip attempt (which found A's two events and wrote nothing), then the lock and
      // a read of only what came after those two, then the batch decided knowing them, committed
      // without waiting for the disk, and the WAL flush after the COMMIT (outside the lock) in the
      // same message.
      expect(sentByB).toHaveLength(3);
      expect(oneTrip(sentByB[0] as string)).toBe(true);
      expect(sentByB[0]).toMatch(/WHERE seq > 2(?!\d)/);
      expect(lockAndRead(sentByB[1] as string)).toBe(true);
      // Under the lock the bodies come back as one text, a line each.
      expect(sentByB[1]).toMatch(/SELECT string_agg\(body, E'\\n' ORDER BY seq\) AS bodies FROM \S+ WHERE seq > 4 AND seq <= 9223372036854775807$/);
      expect(sentByB[2]).toMatch(/^INSERT .*'call\.rejected'.*; SET LOCAL synchronous_commit = off; COMMIT; /s);
      expect(sentByB[2]?.endsWith(`; COMMIT; ${flushWalStatement}`)).toBe(true);
      const events = b.events();
      expect(events.filter((e) => e.type === 'call.admitted')).toHaveLength(1);
      expect(b.usage(grantId).calls).toEqual({ limit: 1, used: 1 });
      expect(verify(events)).toMatchObject({ ok: true, problems: [] });
    });

    it('goes straight to the lock for the next batch after a transaction that found other writers\' events', async () => {
      // B's last transaction found A's events, so its next batch is not tried from its own view.
      expect(await a.invoke(token, 'echo', { text: 'a2' })).toMatchObject({ status: 'rejected' });
      sentByB.length = 0;
      expect(await b.invoke(token, 'echo', { text: 'b2' })).toMatchObject({ status: 'rejected', reason: 'call_budget_exhausted' });
      expect(sentByB.some(oneTrip)).toBe(false);
      expect(lockAndRead(sentByB[0] as string)).toBe(true);
    });

    it('folds other writers\' events read under the lock as one text exactly as the log holds them, line breaks in their strings included', async () => {
      // A tool whose schema text holds a line break, a separator, a quote and a character outside the BMP:
      // canonical JSON escapes the first, so no body holds a raw line break to split on.
      const awkward = 'line one\nline two\u2028"quoted"\\ \u{1F600}';
      await a.registerTool({ ...echoTool, name: 'echo.awkward', inputSchema: { type: 'object', description: awkward, properties: { text: { type: 'string', description: awkward } } } });
      const extra = await a.issue({ tools: ['echo.awkward'], resources: [], expiresAt: Date.now() + hour, budget: { calls: 3, inputBytes: 1_000 } });
      for (const text of ['x', 'y']) expect(await a.invoke(extra.token, 'echo.awkward', { text })).toMatchObject({ status: 'completed' });
      sentByB.length = 0;
      // B's next batch goes to the lock (its last transaction found A's events) and reads A's eight.
      expect(await b.invoke(token, 'echo', { text: 'b-awkward' })).toMatchObject({ status: 'rejected', reason: 'call_budget_exhausted' });
      expect(lockAndRead(sentByB[0] as string)).toBe(true);
      expect(sentByB[0]).toContain('string_agg(body');
      const ofA = a.events();
      expect(b.events().slice(0, ofA.length)).toEqual(ofA);
      expect((b.state().tools['echo.awkward']?.inputSchema as { description?: string }).description).toBe(awkward);
      expect(b.usage(extra.grantId).calls).toEqual({ limit: 3, used: 2 });
      expect(verify(b.events())).toMatchObject({ ok: true, problems: [] });
    });

    it('tries one round trip again once a transaction found the head where this ledger left it', async () => {
      sentByB.length = 0;
      // The first batch still goes to the lock, and finds no other writer's event there…
      expect(await b.invoke(token, 'echo', { text: 'b3' })).toMatchObject({ status: 'rejected', reason: 'call_budget_exhausted' });
      // …so the next one is tried from B's own view, in one round trip.
      expect(await b.invoke(token, 'echo', { text: 'b4' })).toMatchObject({ status: 'rejected', reason: 'call_budget_exhausted' });
      // (lock and read; append, asynchronous commit and the flush in one message; then the one round trip)
      expect(sentByB).toHaveLength(3);
      expect(lockAndRead(sentByB[0] as string)).toBe(true);
      expect(sentByB[1]?.endsWith(`; COMMIT; ${flushWalStatement}`)).toBe(true);
      expect(oneTrip(sentByB[2] as string)).toBe(true);
      expect(verify(b.events())).toMatchObject({ ok: true, problems: [] });
    });
  });
});

import { Pool } from 'pg';
import { firstValueFrom, filter } from 'rxjs';
import { grantOf, LedgerError, openLedger, replay, verify } from '../src';
import { postgresStore } from '../src/postgres';
import { adminPool, describePg, freshSchema, url } from './support/pgTest';
import { echoTool, hour, pgLedger, pgStore } from './support/pgLedger';

describePg('the PostgreSQL store', () => {
  let admin: Pool;
  beforeAll(() => {
    admin = adminPool();
  });
  afterAll(() => admin.end());

  it('applies each migration once when several hosts open a fresh schema at the same time', async () => {
    const schema = freshSchema();
    const ledgers = await Promise.all(Array.from({ length: 5 }, () => pgLedger(schema)));
    const rows = await admin.query(`SELECT id, name FROM ${schema}.schema_migrations ORDER BY id`);
    expect(rows.rows).toEqual([
      { id: 1, name: 'events' },
      { id: 2, name: 'snapshots' },
      { id: 3, name: 'locks' },
    ]);
    await Promise.all(ledgers.map((l) => l.close()));
  });

  it('rebuilds the same state by replay when reopened, and the stored log verifies', async () => {
    const schema = freshSchema();
    const ledger = await pgLedger(schema);
    await ledger.registerTool(echoTool);
    const { token, grantId } = await ledger.issue({ tools: ['echo'], expiresAt: Date.now() + hour, budget: { calls: 3, inputBytes: 1_000 } });
    const outcomes = await Promise.all(Array.from({ length: 5 }, (_, i) => ledger.invoke(token, 'echo', { text: `t${i}` })));
    expect(outcomes.filter((o) => o.status === 'completed')).toHaveLength(3);
    const before = ledger.state();
    await ledger.close();

    const reopened = await pgLedger(schema);
    expect(reopened.state()).toEqual(before);
    expect(reopened.state()).toEqual(replay(reopened.events()));
    expect(verify(reopened.events())).toMatchObject({ ok: true, problems: [] });
    expect(reopened.usage(grantId).calls).toEqual({ limit: 3, used: 3 });
    await reopened.close();
  });

  it('opens from a snapshot bound to the stored log, to the state a full replay gives', async () => {
    const schema = freshSchema();
    const ledger = await pgLedger(schema, { snapshotEvery: 10 });
    await ledger.registerTool(echoTool);
    const { token } = await ledger.issue({ tools: ['echo'], expiresAt: Date.now() + hour, budget: { calls: 100, inputBytes: 100_000 } });
    for (let i = 0; i < 12; i++) await ledger.invoke(token, 'echo', { text: 'x' });
    await ledger.close(); // waits for the snapshot being written
    const snapshots = await admin.query(`SELECT seq FROM ${schema}.snapshots`);
    expect(snapshots.rows.length).toBeGreaterThan(0);

    const store = pgStore(schema);
    const reopened = await openLedger({ store });
    expect(store.openedFromSnapshotSeq).toBe(Number(snapshots.rows[snapshots.rows.length - 1].seq));
    expect(reopened.state()).toEqual(replay(reopened.events()));
    await reopened.close();
  });

  it('hosts sharing a log take turns writing snapshots instead of each writing one per gap', async () => {
    const schema = freshSchema();
    const every = 20;
    const stores = Array.from({ length: 4 }, () => pgStore(schema, { snapshotEvery: every }));
    const hosts = await Promise.all(stores.map((store) => openLedger({ store })));
    for (const host of hosts) await host.registerTool(echoTool);
    const { token } = await hosts[0]!.issue({ tools: ['echo'], expiresAt: Date.now() + hour, budget: { calls: 1_000, inputBytes: 100_000 } });
    for (let i = 0; i < 200; i++) expect(await hosts[i % 4]!.invoke(token, 'echo', { text: 'x' })).toMatchObject({ status: 'completed' });
    await Promise.all(hosts.map((host) => host.close()));
    const head = Number((await admin.query(`SELECT max(seq) AS seq FROM ${schema}.events`)).rows[0].seq);
    const written = stores.reduce((sum, store) => sum + store.snapshotsWritten, 0);
    // One per gap: each a gap (here `every`) or more past the one before, under the snapshot lock,
    // and at most a quarter gap of stagger and a batch later. Each host counting only its own would
    // write about four times as many (66 here).
    expect(written).toBeGreaterThanOrEqual(Math.floor(head / (every * 1.25 + 4)) - 1);
    expect(written).toBeLessThanOrEqual(Math.floor(head / every));
    const store = pgStore(schema);
    const reopened = await openLedger({ store });
    expect(head - (store.openedFromSnapshotSeq ?? 0)).toBeLessThanOrEqual(2 * every);
    await reopened.close();
  });

  it('writes no snapshot while another host holds the log’s snapshot lock, and writes once it is free', async () => {
    const schema = freshSchema();
    const holder = await admin.connect();
    (await pgLedger(schema)).close(); // migrated, so that the lock's row exists
    await holder.query(`BEGIN; SELECT FROM ${schema}.snapshot_lock FOR UPDATE`);
    const calls = async (store: ReturnType<typeof pgStore>): Promise<void> => {
      const ledger = await openLedger({ store });
      await ledger.registerTool(echoTool);
      const { token } = await ledger.issue({ tools: ['echo'], expiresAt: Date.now() + hour, budget: { calls: 100, inputBytes: 100_000 } });
      for (let i = 0; i < 10; i++) await ledger.invoke(token, 'echo', { text: 'x' });
      await ledger.close();
    };
    const blocked = pgStore(schema, { snapshotEvery: 2 });
    try {
      await calls(blocked);
    } finally {
      await holder.query('COMMIT');
      holder.release();
    }
    expect(blocked.snapshotsWritten).toBe(0);
    const free = pgStore(schema, { snapshotEvery: 2 });
    await calls(free);
    expect(free.snapshotsWritten).toBeGreaterThan(0);
    expect((await admin.query(`SELECT count(*)::int AS n FROM ${schema}.snapshots`)).rows[0].n).toBeGreaterThan(0);
  });

  it('refuses UPDATE, DELETE and TRUNCATE of events in the database', async () => {
    const schema = freshSchema();
    const ledger = await pgLedger(schema);
    await ledger.registerTool(echoTool);
    await ledger.close();
    for (const statement of [`UPDATE ${schema}.events SET at = 0`, `DELETE FROM ${schema}.events`, `TRUNCATE ${schema}.events`]) {
      await expect(admin.query(statement)).rejects.toThrow(/append-only/);
    }
    expect((await admin.query(`SELECT count(*)::int AS n FROM ${schema}.events`)).rows[0].n).toBe(1);
  });

  it('runs as the documented least-privileged role, which can neither change events nor disable the trigger', async () => {
    const schema = freshSchema();
    (await pgLedger(schema)).close(); // migrated by the owner
    const role = `atc_writer_${schema}`;
    await admin.query(`CREATE ROLE ${role} LOGIN`);
    await admin.query(`GRANT USAGE ON SCHEMA ${schema} TO ${role}`);
    await admin.query(`GRANT SELECT ON ${schema}.schema_migrations, ${schema}.head TO ${role}`);
    await admin.query(`GRANT SELECT, INSERT ON ${schema}.events TO ${role}`);
    await admin.query(`GRANT SELECT, INSERT, DELETE ON ${schema}.snapshots TO ${role}`);
    await admin.query(`GRANT SELECT, UPDATE ON ${schema}.log_lock, ${schema}.snapshot_lock TO ${role}`);
    const asRole = url().replace('postgres://postgres@', `postgres://${role}@`);
    const store = postgresStore({ connectionString: asRole, schema, snapshotEvery: 2 });
    const ledger = await openLedger({ store });
    await ledger.registerTool(echoTool);
    const { token } = await ledger.issue({ tools: ['echo'], expiresAt: Date.now() + hour, budget: { calls: 5, inputBytes: 1_000 } });
    expect(await ledger.invoke(token, 'echo', { text: 'a' })).toMatchObject({ status: 'completed' });
    await ledger.close();
    expect(store.snapshotsWritten).toBeGreaterThan(0); // the snapshot lock's grants suffice too
    const pool = new Pool({ connectionString: asRole, max: 1 });
    for (const statement of [`UPDATE ${schema}.events SET at = 0`, `DELETE FROM ${schema}.events`, `TRUNCATE ${schema}.events`, `ALTER TABLE ${schema}.events DISABLE TRIGGER USER`]) {
      await expect(pool.query(statement)).rejects.toThrow(/permission denied|must be owner|append-only/);
    }
    await pool.end();
    await admin.query(`DROP OWNED BY ${role}`);
    await admin.query(`DROP ROLE ${role}`);
  });

  it('folds other hosts’ events while idle, and a revocation with abortInFlight on one host aborts a call on another', async () => {
    const schema = freshSchema();
    const a = await pgLedger(schema);
    const b = await pgLedger(schema);
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const waitTool = {
      name: 'wait',
      inputSchema: { type: 'object' },
      run: (_: unknown, ctx: { signal: AbortSignal }) =>
        new Promise((_resolve, reject) => {
          started();
          ctx.signal.addEventListener('abort', () => reject(new Error('aborted')));
        }),
    };
    await a.registerTool(waitTool);
    await b.registerTool(waitTool);
    const issuedSeen = firstValueFrom(b.events$.pipe(filter((e) => e.type === 'grant.issued')));
    const { token, grantId } = await a.issue({ tools: ['wait'], expiresAt: Date.now() + hour, budget: { calls: 5, inputBytes: 1_000 } });
    expect(await issuedSeen).toMatchObject({ grantId }); // folded by b without any command of its own
    const call = b.invoke(token, 'wait', {});
    await running;
    await a.revoke(grantId, { abortInFlight: true });
    expect(await call).toMatchObject({ status: 'failed' });
    expect(grantOf(b.state(), grantId)?.revoked).toBe(true);
    await a.close();
    await b.close();
  });

  it('ends a pool it created on close, never one passed in', async () => {
    const schema = freshSchema();
    const pool = new Pool({ connectionString: url(), max: 2 });
    const passed = await openLedger({ store: postgresStore({ pool, schema }) });
    await passed.registerTool(echoTool);
    await passed.close();
    expect((await pool.query('SELECT 1 AS one')).rows[0].one).toBe(1);
    await pool.end();

    const store = pgStore(schema);
    const own = await openLedger({ store });
    await own.close();
    const internal = (store as unknown as { pool: { pool: Pool } }).pool.pool;
    expect(internal.ended).toBe(true);
  });

  it('needs exactly one of a connection string or a pool', () => {
    expect(() => postgresStore({})).toThrow(TypeError);
    expect(() => postgresStore({ connectionString: url(), pool: new Pool() })).toThrow(TypeError);
    expect(() => postgresStore({ connectionString: url(), schema: 'Bad-Name' })).toThrow(TypeError);
  });

  it('rejects openLedger with a LedgerError within the bound when the server is unreachable', async () => {
    const store = postgresStore({ connectionString: 'postgres://postgres@127.0.0.1:1/postgres', timeoutMs: 1_000 });
    const started = performance.now();
    const error = await openLedger({ store }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LedgerError);
    expect((error as LedgerError).code).toBe('ledger_unavailable');
    expect(performance.now() - started).toBeLessThan(5_000);
    await store.close();
  });

  it('survives its backends being terminated while idle: no crash, the next command works', async () => {
    const schema = freshSchema();
    const victim = `victim_${schema}`;
    const ledger = await openLedger({ store: postgresStore({ connectionString: `${url()}?application_name=${victim}`, schema }) });
    await ledger.registerTool(echoTool);
    const killed = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [victim]);
    expect(killed.rows.length).toBeGreaterThan(0);
    const { token } = await ledger.issue({ tools: ['echo'], expiresAt: Date.now() + hour, budget: { calls: 5, inputBytes: 1_000 } });
    expect(await ledger.invoke(token, 'echo', { text: 'a' })).toMatchObject({ status: 'completed' });
    await ledger.close();
  });
});

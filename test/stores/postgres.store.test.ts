import { Pool } from 'pg';
import { LedgerError, openLedger } from '../../src';
import { postgresStore } from '../../src/postgres';
import { adminPool, describePg, freshSchema, url } from '../support/pgTest';
import { echoTool, hour, pgLedger, pgStore } from '../support/pgLedger';

// What every store does (append, load, snapshots, shared writers, fail closed…) is in the store
// contract suite, test/stores/contract.test.ts; here what only the PostgreSQL store does.
describePg('the PostgreSQL store', () => {
  let admin: Pool;
  beforeAll(() => {
    admin = adminPool();
  });
  afterAll(() => admin.end());

  // Each once, also under concurrent opens: test/stores/contract.test.ts.
  it('applies the migrations events, snapshots and locks', async () => {
    const schema = freshSchema();
    await (await pgLedger(schema)).close();
    const rows = await admin.query(`SELECT id, name FROM ${schema}.schema_migrations ORDER BY id`);
    expect(rows.rows).toEqual([
      { id: 1, name: 'events' },
      { id: 2, name: 'snapshots' },
      { id: 3, name: 'locks' },
    ]);
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

import { Pool, type PoolClient } from 'pg';
import { openLedger } from '../../src';
import { adminPool, describePg, freshSchema, url } from '../support/pgTest';
import { echoTool, hour, pgLedger, pgStore } from '../support/pgLedger';

/**
 * Issue 30, class 4: any PostgreSQL role could stop every host. The log's write lock, the snapshot
 * lock and the migration lock were advisory locks, which need no privilege: a role with no grant on
 * the ledger's schema held them and every host failed `ledger_unavailable`. The keys below are the
 * ones those versions used; the locks now taken need a grant on a table of the ledger's schema.
 */
const advisorySpaces = { log: 0x61746331, snapshots: 0x61746373, migrations: 0x6174636d } as const;

describePg('a role with no grant on the ledger’s schema', () => {
  let admin: Pool;
  beforeAll(() => {
    admin = adminPool();
  });
  afterAll(() => admin.end());

  /** A LOGIN role the owner granted nothing, and a pool that connects as it. */
  async function nobody(name: string): Promise<Pool> {
    await admin.query(`CREATE ROLE ${name} LOGIN`);
    const pool = new Pool({ connectionString: url().replace('postgres://postgres@', `postgres://${name}@`), max: 2 });
    pool.on('error', () => undefined);
    return pool;
  }

  async function dropRole(pool: Pool, name: string): Promise<void> {
    await pool.end();
    await admin.query(`DROP OWNED BY ${name}`);
    await admin.query(`DROP ROLE ${name}`);
  }

  it('holds every advisory lock the ledger used to take, and no host waits for it: calls, snapshots and migrations go on', async () => {
    const schema = freshSchema();
    const fresh = freshSchema(); // migrated only while the locks are held
    (await pgLedger(schema)).close();
    const role = `nobody_${schema}`;
    const pool = await nobody(role);
    const holder: PoolClient = await pool.connect();
    try {
      await holder.query('BEGIN');
      for (const s of [schema, fresh]) {
        for (const space of Object.values(advisorySpaces)) await holder.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [space, s]);
      }
      // A deadline short enough that a host waiting for the holder would fail `ledger_unavailable`.
      const store = pgStore(schema, { timeoutMs: 2_000, snapshotEvery: 2 });
      const ledger = await openLedger({ store });
      await ledger.registerTool(echoTool);
      const { token } = await ledger.issue({ tools: ['echo'], expiresAt: Date.now() + hour, budget: { calls: 10, inputBytes: 1_000 } });
      for (let i = 0; i < 5; i++) expect(await ledger.invoke(token, 'echo', { text: 'x' })).toMatchObject({ status: 'completed' });
      await ledger.close(); // waits for the snapshot being written
      expect(store.snapshotsWritten).toBeGreaterThan(0);
      const migrated = await pgLedger(fresh, { timeoutMs: 2_000 });
      await migrated.registerTool(echoTool);
      await migrated.close();
      expect((await admin.query(`SELECT count(*)::int AS n FROM ${fresh}.schema_migrations`)).rows[0].n).toBeGreaterThan(0);
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
      await dropRole(pool, role);
    }
  });

  it('cannot take the locks the ledger takes now', async () => {
    const schema = freshSchema();
    (await pgLedger(schema)).close();
    const role = `nobody_${schema}`;
    const pool = await nobody(role);
    const locks = [`SELECT FROM ${schema}.log_lock FOR UPDATE`, `SELECT FROM ${schema}.snapshot_lock FOR UPDATE`, `LOCK TABLE ${schema}.schema_migrations IN EXCLUSIVE MODE`];
    try {
      for (const lock of locks) await expect(pool.query(`BEGIN; ${lock}; ROLLBACK`)).rejects.toThrow(/permission denied for schema/);
      // Nor with an auditor's grants: USAGE on the schema and SELECT on every table.
      await admin.query(`GRANT USAGE ON SCHEMA ${schema} TO ${role}`);
      await admin.query(`GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO ${role}`);
      for (const lock of locks) await expect(pool.query(`BEGIN; ${lock}; ROLLBACK`)).rejects.toThrow(/permission denied for table/);
    } finally {
      await dropRole(pool, role);
    }
  });

  it('with USAGE on the schema, holds the table-level locks PREPARE takes unchecked, and no host waits for it', async () => {
    const schema = freshSchema();
    (await pgLedger(schema)).close();
    const role = `usage_${schema}`;
    const pool = await nobody(role);
    await admin.query(`GRANT USAGE ON SCHEMA ${schema} TO ${role}`);
    const holder: PoolClient = await pool.connect();
    try {
      // Parse analysis locks each table (ROW SHARE for FOR UPDATE, ROW EXCLUSIVE for DELETE) and
      // PREPARE checks no privilege, so these hold until ROLLBACK: a `LOCK TABLE … IN EXCLUSIVE MODE`
      // would wait for them. The ledger's row locks do not conflict with them.
      await holder.query('BEGIN');
      for (const table of ['log_lock', 'snapshot_lock', 'events', 'snapshots', 'head', 'schema_migrations']) {
        await holder.query(`PREPARE lock_${table} AS SELECT FROM ${schema}.${table} FOR UPDATE`);
        await holder.query(`PREPARE delete_${table} AS DELETE FROM ${schema}.${table}`);
      }
      const held = await admin.query(`SELECT count(*)::int AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation JOIN pg_namespace s ON s.oid = c.relnamespace WHERE s.nspname = $1 AND l.granted AND l.pid <> pg_backend_pid()`, [schema]);
      expect(held.rows[0].n).toBeGreaterThanOrEqual(6);
      const store = pgStore(schema, { timeoutMs: 2_000, snapshotEvery: 2 });
      const ledger = await openLedger({ store });
      await ledger.registerTool(echoTool);
      const { token } = await ledger.issue({ tools: ['echo'], expiresAt: Date.now() + hour, budget: { calls: 10, inputBytes: 1_000 } });
      for (let i = 0; i < 5; i++) expect(await ledger.invoke(token, 'echo', { text: 'x' })).toMatchObject({ status: 'completed' });
      await ledger.close();
      expect(store.snapshotsWritten).toBeGreaterThan(0);
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
      await dropRole(pool, role);
    }
  });
});

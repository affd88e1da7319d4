import { flushWal, flushWalStatement } from '../../src/stores/postgres/postgresLocking';
import { HeldClient } from '../../src/stores/postgres/postgresPool';
import { adminPool, describePg, freshSchema } from '../support/pgTest';

/**
 * The asynchronous commit under the lock is durable only because `flushWal` forces the WAL to disk
 * before anything is acknowledged (docs/postgres.md, "Durability"). With the WAL writer slowed to
 * 10 s, nothing else flushes an asynchronous commit for the length of this test, so the flush LSN
 * passing the commit's position is `flushWal`'s doing.
 */
describePg('flushWal: what makes an asynchronous commit durable', () => {
  const admin = adminPool();
  const table = freshSchema('walflush');
  beforeAll(async () => {
    await admin.query("ALTER SYSTEM SET wal_writer_delay = '10s'");
    await admin.query('SELECT pg_reload_conf()');
    await admin.query(`CREATE TABLE ${table} (x int)`);
  });
  afterAll(async () => {
    await admin.query('ALTER SYSTEM RESET wal_writer_delay');
    await admin.query('SELECT pg_reload_conf()');
    await admin.query(`DROP TABLE IF EXISTS ${table}`);
    await admin.end();
  });

  test('after flushWal the WAL is durable past an asynchronously committed transaction', async () => {
    const client = await admin.connect();
    try {
      await client.query(`BEGIN; INSERT INTO ${table} VALUES (1); SET LOCAL synchronous_commit = off; COMMIT`);
      const committedAt = (await client.query('SELECT pg_current_wal_insert_lsn() AS lsn')).rows[0].lsn as string;
      await flushWal(new HeldClient(client, performance.now() + 10_000));
      const flushed = await client.query('SELECT pg_current_wal_flush_lsn() >= $1::pg_lsn AS durable', [committedAt]);
      expect(flushed.rows[0].durable).toBe(true);
    } finally {
      client.release();
    }
  });

  test('a flush sent after COMMIT in the same message runs once the lock is released, and is durable past the commit when answered', async () => {
    // The store's append message: COMMIT (asynchronous) releases the lock, then the flush runs as a
    // transaction of its own. The probes between them read where the WAL was just after the commit,
    // and whether this session still held any advisory lock.
    const client = await admin.connect();
    try {
      const results = (await client.query(
        `BEGIN; SELECT pg_advisory_xact_lock(7, 7); INSERT INTO ${table} VALUES (2); SET LOCAL synchronous_commit = off; COMMIT; ` +
          `SELECT pg_current_wal_insert_lsn() AS lsn, (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()) AS held; ${flushWalStatement}`,
      )) as unknown as { rows: { lsn?: string; held?: string }[] }[];
      const probe = results[5]?.rows[0];
      expect(Number(probe?.held)).toBe(0);
      const flushed = await client.query('SELECT pg_current_wal_flush_lsn() >= $1::pg_lsn AS durable', [probe?.lsn]);
      expect(flushed.rows[0].durable).toBe(true);
    } finally {
      client.release();
    }
  });
});

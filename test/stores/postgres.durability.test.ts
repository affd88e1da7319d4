import { Pool, type PoolClient } from 'pg';
import { LedgerError, openLedger, verify, type Ledger, type LedgerEvent } from '../../src';
import { createPostgresStore, type PostgresInternals, type PostgresStoreOptions } from '../../src/stores/postgres/postgresStore';
import { flushWalStatement } from '../../src/stores/postgres/postgresLocking';
import { hour } from '../support/pgLedger';
import { adminPool, describePg, freshSchema, url } from '../support/pgTest';

/**
 * A pool on the test cluster whose clients note every message they send and every answer they get
 * (in `trace`, beside the tools' runs), and whose WAL flushes can be made to fail: `onFlush` runs
 * instead of the flush, which then fails as a dropped connection does (SQLSTATE 08006). A flush
 * sent after COMMIT in the same message fails the same way after the rest of the message has run
 * (noted as answered): the batch committed, its flush never answered.
 */
function tracedPool(): { pool: Pool; trace: string[]; failFlush: (times: number, before?: () => Promise<void>) => void } {
  const trace: string[] = [];
  let failing = 0;
  let before: (() => Promise<void>) | undefined;
  const pool = new Pool({ connectionString: url(), max: 2 });
  pool.on('error', () => undefined);
  pool.on('connect', (client: PoolClient) => {
    const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const text = typeof args[0] === 'string' ? args[0] : '(query object)';
      trace.push(`sent ${text}`);
      const flushAfterCommit = `; ${flushWalStatement}`;
      if ((text === flushWalStatement || text.endsWith(flushAfterCommit)) && failing > 0) {
        failing--;
        return (async () => {
          if (text !== flushWalStatement) {
            const committed = text.slice(0, -flushAfterCommit.length);
            await query(committed);
            trace.push(`answered ${committed}`);
          }
          await before?.();
          throw Object.assign(new Error('connection failure during the flush'), { code: '08006' });
        })();
      }
      return query(...args).then((result) => {
        trace.push(`answered ${text}`);
        return result;
      });
    };
  });
  return {
    pool,
    trace,
    failFlush: (times, run) => {
      failing = times;
      before = run;
    },
  };
}

const lockedCommit = (line: string): boolean => line.startsWith('answered INSERT') && line.endsWith('SET LOCAL synchronous_commit = off; COMMIT');
/** The answer to a batch's append, asynchronous COMMIT and, after it in the same message, the WAL flush. */
const flushedCommit = (line: string): boolean => line.startsWith('answered INSERT') && line.endsWith(`SET LOCAL synchronous_commit = off; COMMIT; ${flushWalStatement}`);

describePg('PostgreSQL durability: asynchronous commit under the lock, WAL flush outside it', () => {
  const pools: Pool[] = [];
  const admin = adminPool();
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.end()));
    await admin.end();
  });

  /**
   * A ledger whose every batch goes through the lock in two round trips (the shape that commits
   * asynchronously), never catching up on a timer: what it sends is then exactly its own batches.
   */
  async function tracedLedger(schema: string, options: Partial<PostgresStoreOptions> = {}, internals: PostgresInternals = { optimistic: false }): Promise<{ ledger: Ledger; trace: string[]; failFlush: ReturnType<typeof tracedPool>['failFlush']; ran: string[] }> {
    const traced = tracedPool();
    pools.push(traced.pool);
    const store = createPostgresStore({ pool: traced.pool, schema, ...options }, internals);
    Object.defineProperty(store, 'catchUpIntervalMs', { value: 2 ** 31 - 1 });
    const ledger = await openLedger({ store });
    const ran: string[] = [];
    await ledger.registerTool({
      name: 'work',
      inputSchema: { type: 'object' },
      run: (_args, ctx) => {
        ran.push(ctx.callId);
        traced.trace.push(`tool ran ${ctx.callId}`);
      },
    });
    return { ledger, trace: traced.trace, failFlush: traced.failFlush, ran };
  }

  /** Deletes the events after `seq`, as a restore or a failover to a lagging standby loses them (a superuser skips the triggers). */
  async function loseEventsAfter(schema: string, seq: number): Promise<void> {
    const client = await admin.connect();
    try {
      await client.query('BEGIN');
      await client.query('SET LOCAL session_replication_role = replica');
      await client.query(`DELETE FROM "${schema}".events WHERE seq > $1`, [seq]);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
  }

  async function storedSeqs(schema: string): Promise<number[]> {
    const result = await admin.query(`SELECT seq FROM "${schema}".events ORDER BY seq`);
    return (result.rows as { seq: string }[]).map((r) => Number(r.seq));
  }

  async function reopened(schema: string): Promise<Ledger> {
    return openLedger({ store: createPostgresStore({ connectionString: url(), schema }) });
  }

  const grant = (ledger: Ledger): Promise<{ token: string; grantId: string }> => ledger.issue({ tools: ['work'], expiresAt: Date.now() + hour, budget: { calls: 100, inputBytes: 100_000 } });

  it('runs a tool only after the WAL flush that follows its admission\'s asynchronous commit has answered', async () => {
    const { ledger, trace } = await tracedLedger(freshSchema());
    const { token } = await grant(ledger);
    trace.length = 0;
    const outcome = await ledger.invoke(token, 'work', {});
    expect(outcome).toMatchObject({ status: 'completed' });
    // One message commits and then flushes; the server answers it only after both have run.
    const flushedAt = trace.findIndex(flushedCommit);
    const ranAt = trace.indexOf(`tool ran ${outcome.callId}`);
    expect(flushedAt).toBeGreaterThanOrEqual(0);
    expect(ranAt).toBeGreaterThan(flushedAt);
    await ledger.close();
  });

  it('retries a flush that failed: the batch it finds committed stands, is flushed, and is decided only once', async () => {
    const schema = freshSchema();
    const { ledger, failFlush, ran, trace } = await tracedLedger(schema);
    const { token } = await grant(ledger);
    failFlush(1);
    trace.length = 0;
    const outcome = await ledger.invoke(token, 'work', {});
    expect(outcome).toMatchObject({ status: 'completed' });
    expect(ran).toEqual([outcome.callId]);
    // The retry found the batch in the log, and flushed before the tool ran.
    const ranAt = trace.indexOf(`tool ran ${outcome.callId}`);
    expect(trace.slice(0, ranAt).filter((line) => line === `answered ${flushWalStatement}`)).toHaveLength(1);
    expect(trace.slice(0, ranAt).filter(lockedCommit)).toHaveLength(1);
    const events = ledger.events();
    expect(events.filter((e) => e.type === 'call.admitted' && e.callId === outcome.callId)).toHaveLength(1);
    expect(await storedSeqs(schema)).toEqual(events.map((e) => e.seq));
    expect(verify(events)).toMatchObject({ ok: true, problems: [] });
    await ledger.close();
  });

  /**
   * The crash between COMMIT and the WAL flush, in either shape: the admission committed (the lock
   * released) but never reached the disk. The call is `ledger_unavailable`, its tool never runs, and
   * the ledger, which never folded the lost batch, goes on from the log the server kept.
   */
  async function expectLostBeforeFlushRejected(internals: PostgresInternals): Promise<void> {
    const schema = freshSchema();
    const { ledger, failFlush, ran } = await tracedLedger(schema, { retriesMax: 0 }, internals);
    const { token } = await grant(ledger);
    const head = ledger.events().length;
    failFlush(1, () => loseEventsAfter(schema, head));
    const lost = await ledger.invoke(token, 'work', {});
    expect(lost).toMatchObject({ status: 'rejected', reason: 'ledger_unavailable' });
    expect(ran).toEqual([]);
    expect(ledger.events()).toHaveLength(head);
    const next = await ledger.invoke(token, 'work', {});
    expect(next).toMatchObject({ status: 'completed' });
    expect(ran).toEqual([next.callId]);
    const fresh = await reopened(schema);
    expect(fresh.events()).toEqual(ledger.events());
    expect(verify(fresh.events())).toMatchObject({ ok: true, problems: [] });
    expect(fresh.events().some((e: LedgerEvent) => e.type === 'call.admitted' && e.callId === lost.callId)).toBe(false);
    await fresh.close();
    await ledger.close();
  }

  describe('in the one-round-trip shape (the head where this ledger left it)', () => {
    /** The one-round-trip message: lock, conditional insert, asynchronous COMMIT, then the flush outside the lock. */
    const oneTripFlushed = (line: string): boolean =>
      line.startsWith('answered BEGIN') && line.includes('WHERE coalesce((SELECT max(seq) FROM') && line.endsWith(`SET LOCAL synchronous_commit = off; COMMIT; ${flushWalStatement}`);
    const oneTripCommitted = (line: string): boolean => line.startsWith('answered BEGIN') && line.includes('WHERE coalesce((SELECT max(seq) FROM') && line.endsWith('SET LOCAL synchronous_commit = off; COMMIT');

    it('commits without waiting for the disk and runs the tool only after the flush in the same message has answered', async () => {
      const { ledger, trace } = await tracedLedger(freshSchema(), {}, { optimistic: true });
      const { token } = await grant(ledger);
      trace.length = 0;
      const outcome = await ledger.invoke(token, 'work', {});
      expect(outcome).toMatchObject({ status: 'completed' });
      const flushedAt = trace.findIndex(oneTripFlushed);
      const ranAt = trace.indexOf(`tool ran ${outcome.callId}`);
      expect(flushedAt).toBeGreaterThanOrEqual(0);
      expect(ranAt).toBeGreaterThan(flushedAt);
      // Nothing went through the lock in two round trips: the one message was the whole admission.
      expect(trace.slice(0, ranAt).filter((line) => line.startsWith('sent '))).toHaveLength(1);
      await ledger.close();
    });

    it('retries a flush that failed after the one-round-trip COMMIT: the batch stands, is flushed, and is decided only once', async () => {
      const schema = freshSchema();
      const { ledger, failFlush, ran, trace } = await tracedLedger(schema, {}, { optimistic: true });
      const { token } = await grant(ledger);
      failFlush(1);
      trace.length = 0;
      const outcome = await ledger.invoke(token, 'work', {});
      expect(outcome).toMatchObject({ status: 'completed' });
      expect(ran).toEqual([outcome.callId]);
      const ranAt = trace.indexOf(`tool ran ${outcome.callId}`);
      expect(trace.slice(0, ranAt).filter(oneTripCommitted)).toHaveLength(1);
      expect(trace.slice(0, ranAt).filter((line) => line === `answered ${flushWalStatement}`)).toHaveLength(1);
      const events = ledger.events();
      expect(events.filter((e) => e.type === 'call.admitted' && e.callId === outcome.callId)).toHaveLength(1);
      expect(await storedSeqs(schema)).toEqual(events.map((e) => e.seq));
      expect(verify(events)).toMatchObject({ ok: true, problems: [] });
      await ledger.close();
    });

    it('rejects the call ledger_unavailable without running its tool when the server lost the batch before its flush', async () => {
      await expectLostBeforeFlushRejected({ optimistic: true });
    });
  });

  describe('when the server loses an asynchronously committed batch before its flush', () => {
    it('rejects the call ledger_unavailable without running its tool, and goes on from the log as the server kept it', async () => {
      await expectLostBeforeFlushRejected({ optimistic: false });
    });

    it('decides the batch afresh when a retry finds it gone, and admits the call once', async () => {
      const schema = freshSchema();
      const { ledger, failFlush, ran } = await tracedLedger(schema);
      const { token } = await grant(ledger);
      const head = ledger.events().length;
      failFlush(1, () => loseEventsAfter(schema, head));
      const outcome = await ledger.invoke(token, 'work', {});
      expect(outcome).toMatchObject({ status: 'completed' });
      expect(ran).toEqual([outcome.callId]);
      const fresh = await reopened(schema);
      expect(fresh.events()).toEqual(ledger.events());
      expect(fresh.events().filter((e) => e.type === 'call.admitted')).toHaveLength(1);
      expect(verify(fresh.events())).toMatchObject({ ok: true, problems: [] });
      await fresh.close();
      await ledger.close();
    });
  });

  describe.each([
    ['in one round trip', { optimistic: true }],
    ['under the lock in two round trips', { optimistic: false }],
  ] as const)('a log that lost events this ledger folded (restore, failover), written %s', (_shape, internals) => {
    it('fails the call closed and appends nothing after the lost head; a ledger opened again rebuilds from the log', async () => {
      const schema = freshSchema();
      const { ledger, ran } = await tracedLedger(schema, {}, internals);
      const { token } = await grant(ledger);
      const kept = ledger.events().length;
      expect(await ledger.invoke(token, 'work', {})).toMatchObject({ status: 'completed' });
      await loseEventsAfter(schema, kept);
      ran.length = 0;

      const refused = await ledger.invoke(token, 'work', {});
      expect(refused).toMatchObject({ status: 'rejected', reason: 'ledger_unavailable' });
      expect(ran).toEqual([]);
      const issueError = await grant(ledger).catch((e: unknown) => e);
      expect(issueError).toBeInstanceOf(LedgerError);
      expect(((issueError as LedgerError).cause as LedgerError).code).toBe('invalid_log');
      // No gap, no fork: the log is what the server kept.
      expect(await storedSeqs(schema)).toEqual(Array.from({ length: kept }, (_, i) => i + 1));

      const fresh = await reopened(schema);
      await fresh.registerTool({ name: 'work', inputSchema: { type: 'object' }, run: () => undefined });
      expect(await fresh.invoke(token, 'work', {})).toMatchObject({ status: 'completed' });
      expect(verify(fresh.events())).toMatchObject({ ok: true, problems: [] });
      await fresh.close();
      await ledger.close();
    });
  });

  it('refuses a catch-up read from a head the log no longer holds', async () => {
    const schema = freshSchema();
    const store = createPostgresStore({ connectionString: url(), schema });
    const ledger = await openLedger({ store });
    await ledger.registerTool({ name: 'work', inputSchema: { type: 'object' }, run: () => undefined });
    await grant(ledger);
    const head = ledger.events()[ledger.events().length - 1] as LedgerEvent;
    await expect(store.readAfter(head.seq, head.hash)).resolves.toEqual([]);
    await expect(store.readAfter(head.seq, 'f'.repeat(64))).rejects.toMatchObject({ code: 'invalid_log' });
    await loseEventsAfter(schema, head.seq - 1);
    await expect(store.readAfter(head.seq, head.hash)).rejects.toMatchObject({ code: 'invalid_log' });
    await ledger.close();
  });

  it('flushes what a catch-up read found before handing it to the ledger', async () => {
    const schema = freshSchema();
    const writer = await reopened(schema);
    await writer.registerTool({ name: 'work', inputSchema: { type: 'object' }, run: () => undefined });
    const { token } = await grant(writer);
    expect(await writer.invoke(token, 'work', {})).toMatchObject({ status: 'completed' });
    const traced = tracedPool();
    pools.push(traced.pool);
    const reader = createPostgresStore({ pool: traced.pool, schema });
    await reader.open();
    traced.trace.length = 0;
    const found = await reader.readAfter(1, (writer.events()[0] as LedgerEvent).hash);
    expect(found.map((e) => e.seq)).toEqual(writer.events().slice(1).map((e) => e.seq));
    expect(traced.trace[traced.trace.length - 1]).toBe(`answered ${flushWalStatement}`);
    // Nothing found, nothing to flush.
    traced.trace.length = 0;
    await reader.readAfter(writer.events().length, (writer.events()[writer.events().length - 1] as LedgerEvent).hash);
    expect(traced.trace.some((line) => line.includes(flushWalStatement))).toBe(false);
    await reader.close();
    await writer.close();
  });
});

import { chmodSync } from 'node:fs';
import Database from 'better-sqlite3';
import { createLedger, LedgerError, sqliteStore, verify, type LedgerEvent, type SharedEventStore, type SqliteEventStore } from '../../src';
import { sqliteTempDir } from '../support/sqliteFiles';

const tmp = sqliteTempDir();
afterAll(() => tmp.cleanup());
const hour = 3_600_000;

/** A file holding a registered `noop` tool and one grant; returns the grant's token. */
async function prepared(name: string): Promise<{ file: string; token: string }> {
  const file = tmp.file(name);
  const ledger = createLedger({ store: sqliteStore({ path: file }) });
  await ledger.registerTool({ name: 'noop', inputSchema: { type: 'object', properties: {} }, run: () => null });
  const { token } = await ledger.issue({ tools: ['noop'], expiresAt: Date.now() + hour, budget: { calls: 9, inputBytes: 100 } });
  await ledger.close();
  return { file, token };
}

async function attachCounting(store: SharedEventStore): Promise<{ ledger: ReturnType<typeof createLedger>; runs: () => number }> {
  const ledger = createLedger({ store });
  let runs = 0;
  await ledger.registerTool({ name: 'noop', inputSchema: { type: 'object', properties: {} }, run: () => void runs++ });
  return { ledger, runs: () => runs };
}

function eventCount(file: string): number {
  const db = new Database(file, { readonly: true });
  const n = db.prepare('SELECT count(*) FROM events').pluck().get() as number;
  db.close();
  return n;
}

describe('fail closed', () => {
  it('a store opened read-only rejects admissions ledger_unavailable and runs no tool', async () => {
    const { file, token } = await prepared('readonly.sqlite');
    const before = eventCount(file);
    const { ledger, runs } = await attachCounting(sqliteStore({ path: file, readonly: true }));
    expect(await ledger.invoke(token, 'noop', {})).toMatchObject({ status: 'rejected', reason: 'ledger_unavailable' });
    expect(runs()).toBe(0);
    expect(eventCount(file)).toBe(before);
    await ledger.close();
  });

  // Root ignores file permissions, so this only runs as an ordinary user (the case above covers root).
  (process.getuid?.() === 0 ? it.skip : it)('a read-only file rejects admissions ledger_unavailable and runs no tool', async () => {
    const { file, token } = await prepared('chmod.sqlite');
    chmodSync(file, 0o444);
    const store = sqliteStore({ path: file });
    expect(store.readonly).toBe(true);
    const { ledger, runs } = await attachCounting(store);
    expect(await ledger.invoke(token, 'noop', {})).toMatchObject({ status: 'rejected', reason: 'ledger_unavailable' });
    expect(runs()).toBe(0);
    await ledger.close();
  });

  it('a store that fails mid-transaction (disk full) rolls back, rejects ledger_unavailable, and recovers without a gap', async () => {
    const { file, token } = await prepared('full.sqlite');
    const inner: SqliteEventStore = sqliteStore({ path: file });
    let failing = true;
    const diskFull: SharedEventStore = {
      load: () => inner.load(),
      readAfter: (seq) => inner.readAfter(seq),
      exclusive: (after, fn) => inner.exclusive(after, fn),
      append(events: readonly LedgerEvent[]) {
        inner.append(events); // the rows are written inside the transaction, then the "disk" fills up
        if (failing) throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
      },
      close: () => inner.close(),
    };
    const { ledger, runs } = await attachCounting(diskFull);
    const before = eventCount(file);
    expect(await ledger.invoke(token, 'noop', {})).toMatchObject({ status: 'rejected', reason: 'ledger_unavailable' });
    expect(runs()).toBe(0);
    expect(eventCount(file)).toBe(before);
    expect(ledger.events()).toHaveLength(before);

    failing = false;
    expect(await ledger.invoke(token, 'noop', {})).toMatchObject({ status: 'completed' });
    expect(runs()).toBe(1);
    expect(verify(ledger.events())).toMatchObject({ ok: true, checked: before + 2 });
    await ledger.close();
  });

  it('a writer holding the lock past busyTimeoutMs makes admission ledger_unavailable, not a hang', async () => {
    const { file, token } = await prepared('busy.sqlite');
    const { ledger, runs } = await attachCounting(sqliteStore({ path: file, busyTimeoutMs: 0 }));
    const other = new Database(file);
    other.exec('BEGIN IMMEDIATE');
    expect(await ledger.invoke(token, 'noop', {})).toMatchObject({ status: 'rejected', reason: 'ledger_unavailable' });
    expect(runs()).toBe(0);
    other.exec('ROLLBACK');
    other.close();
    expect(await ledger.invoke(token, 'noop', {})).toMatchObject({ status: 'completed' });
    await ledger.close();
  });

  it('a lock held past a non-zero busyTimeoutMs fails the batch after that long, ledger_unavailable with SQLITE_BUSY as cause', async () => {
    const { file, token } = await prepared('busy-bounded.sqlite');
    const { ledger, runs } = await attachCounting(sqliteStore({ path: file, busyTimeoutMs: 50 }));
    const other = new Database(file);
    other.exec('BEGIN IMMEDIATE');
    const started = performance.now();
    const failure: unknown = await ledger.issue({ tools: ['noop'], expiresAt: Date.now() + hour, budget: { calls: 1, inputBytes: 1 } }).then(
      () => undefined,
      (error: unknown) => error,
    );
    const waited = performance.now() - started;
    // Read the cause chain by property: Error `cause` is not enumerable, so object matchers may skip it.
    const storeError = (failure as LedgerError | undefined)?.cause as LedgerError | undefined;
    expect((failure as LedgerError | undefined)?.code).toBe('ledger_unavailable');
    expect(storeError?.code).toBe('ledger_unavailable');
    expect((storeError?.cause as { code?: string } | undefined)?.code).toBe('SQLITE_BUSY');
    expect(await ledger.invoke(token, 'noop', {})).toMatchObject({ status: 'rejected', reason: 'ledger_unavailable' });
    expect(runs()).toBe(0);
    other.exec('ROLLBACK');
    other.close();
    expect(waited).toBeGreaterThanOrEqual(50);
    expect(waited).toBeLessThan(5_000); // bounded by busyTimeoutMs, not by the default or forever
    await ledger.close();
  });

  it('a snapshot kept from the lock is skipped after a short wait: no error, no snapshot row', async () => {
    const file = tmp.file('snapshot-busy.sqlite');
    const writer = createLedger({ store: sqliteStore({ path: file, snapshotEvery: 0 }) });
    await writer.registerTool({ name: 'noop', inputSchema: { type: 'object', properties: {} }, run: () => null });
    const state = writer.state();
    await writer.close();
    const store = sqliteStore({ path: file, snapshotEvery: 1 }); // default busyTimeoutMs: 5,000
    const other = new Database(file);
    other.exec('BEGIN IMMEDIATE');
    const started = performance.now();
    expect(() => store.offerSnapshot(state)).not.toThrow();
    const waited = performance.now() - started;
    other.exec('ROLLBACK');
    expect(other.prepare('SELECT count(*) FROM snapshots').pluck().get()).toBe(0);
    other.close();
    store.close();
    expect(waited).toBeLessThan(2_000); // the snapshot limit (100 ms), not busyTimeoutMs
  });
});

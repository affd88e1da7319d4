import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { LedgerError, sealEvent, genesisHash, sqliteStore, sha256Hex, verify, type LedgerEvent } from '../../src';
import { packageRoot } from '../../src/stores/shared/migrationFiles';
import { notesLedger } from '../support/fixtures';
import { sqliteTempDir } from '../support/sqliteFiles';

const tmp = sqliteTempDir();
afterAll(() => tmp.cleanup());
const hour = 3_600_000;
const migrationsDir = path.join(packageRoot(), 'migrations');

function toolEvent(seq: number, prev = { seq: seq - 1, hash: genesisHash }): LedgerEvent {
  return sealEvent({ type: 'tool.registered', tool: `t${seq}`, inputSchema: { type: 'object' } }, 1_000, prev);
}

// What every store does (append, load, snapshots, shared writers, fail closed, append-only table…)
// is in the store contract suite, test/stores/contract.test.ts; here what only the SQLite store does.
describe('opening a file', () => {
  it('puts the file in WAL mode', () => {
    const file = tmp.file('wal.sqlite');
    sqliteStore({ path: file }).close();
    const db = new Database(file, { readonly: true });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
  });

  it('records each migration once, with the sha256 of its file', () => {
    const file = tmp.file('migrations.sqlite');
    sqliteStore({ path: file }).close();
    sqliteStore({ path: file }).close();
    const db = new Database(file, { readonly: true });
    const rows = db.prepare('SELECT id, name, sha256 FROM schema_migrations ORDER BY id').all() as { id: number; name: string; sha256: string }[];
    db.close();
    expect(rows.map((r) => [r.id, r.name])).toEqual([
      [1, 'events'],
      [2, 'snapshots'],
      [3, 'snapshot_follower'],
    ]);
    expect(rows[0]?.sha256).toBe(sha256Hex(readFileSync(path.join(migrationsDir, '0001_events.sql'), 'utf8')));
  });

  it('refuses a file whose applied migration differs from the migration file', () => {
    const file = tmp.file('edited-migration.sqlite');
    sqliteStore({ path: file }).close();
    const edited = tmp.file('edited-migrations');
    cpSync(migrationsDir, edited, { recursive: true });
    writeFileSync(path.join(edited, '0002_snapshots.sql'), `${readFileSync(path.join(edited, '0002_snapshots.sql'), 'utf8')}\n-- edited\n`);
    expect(() => sqliteStore({ path: file, migrationsDir: edited })).toThrow(/migration 2 \(snapshots\).*must never be edited/);
  });

  it('refuses a file migrated by a newer version', () => {
    const file = tmp.file('newer.sqlite');
    const newer = tmp.file('newer-migrations');
    cpSync(migrationsDir, newer, { recursive: true });
    writeFileSync(path.join(newer, '0004_future.sql'), 'CREATE TABLE future (x INTEGER);');
    sqliteStore({ path: file, migrationsDir: newer }).close();
    expect(() => sqliteStore({ path: file })).toThrow(/migration 4 \(future\).*does not know/);
  });

  // SQLite ignores a pragma it cannot apply instead of failing, and better-sqlite3's WAL default is
  // NORMAL: the store reads the level back. The driver's pragma() is the seam that simulates that.
  it.each(['FULL', 'EXTRA'] as const)('refuses to open when synchronous=%s does not read back (SQLite left NORMAL), with a clear error', (synchronous) => {
    const file = tmp.file(`sync-${synchronous}.sqlite`);
    const realPragma = Database.prototype.pragma;
    const ignored = jest.spyOn(Database.prototype, 'pragma').mockImplementation(function (this: Database.Database, source: string, options?: Database.PragmaOptions): unknown {
      return source === 'synchronous' ? 1 : realPragma.call(this, source, options);
    });
    try {
      const opening = (): unknown => sqliteStore({ path: file, synchronous });
      expect(opening).toThrow(LedgerError);
      expect(opening).toThrow(`SQLite did not take synchronous=${synchronous} (reads back 1): refusing to acknowledge commits that may not be durable`);
    } finally {
      ignored.mockRestore();
    }
    // The refused connection was closed: the file opens normally once the setting takes.
    sqliteStore({ path: file, synchronous }).close();
  });

  it('opens when synchronous reads back at the level asked for', () => {
    const seen: unknown[] = [];
    const realPragma = Database.prototype.pragma;
    const spy = jest.spyOn(Database.prototype, 'pragma').mockImplementation(function (this: Database.Database, source: string, options?: Database.PragmaOptions): unknown {
      const value = realPragma.call(this, source, options);
      if (source === 'synchronous') seen.push(value);
      return value;
    });
    try {
      sqliteStore({ path: tmp.file('sync-extra.sqlite'), synchronous: 'EXTRA' }).close();
      sqliteStore({ path: tmp.file('sync-full.sqlite') }).close();
    } finally {
      spy.mockRestore();
    }
    expect(seen).toEqual([3, 2]);
  });

  it('rejects options it cannot honour', () => {
    expect(() => sqliteStore({ path: tmp.file('x.sqlite'), synchronous: 'NORMAL' as 'FULL' })).toThrow(TypeError);
    expect(() => sqliteStore({ path: tmp.file('x.sqlite'), busyTimeoutMs: -1 })).toThrow(TypeError);
    expect(() => sqliteStore({ path: tmp.file('x.sqlite'), snapshotEvery: 1.5 })).toThrow(TypeError);
  });

  it('runs a whole ledger in :memory:', async () => {
    const { ledger, notes } = await notesLedger({ store: sqliteStore({ path: ':memory:' }) });
    const { token } = await ledger.issue({ tools: ['notes.write'], resources: ['notes:/drafts/'], expiresAt: Date.now() + hour, budget: { calls: 2, inputBytes: 1000 } });
    const outcomes = await Promise.all([1, 2, 3].map((i) => ledger.invoke(token, 'notes.write', { path: `drafts/${i}`, text: 'x' })));
    expect(outcomes.map((o) => o.status).sort()).toEqual(['completed', 'completed', 'rejected']);
    expect(notes.size).toBe(2);
    expect(verify(ledger.events()).ok).toBe(true);
    await ledger.close();
  });
});

describe('group commit', () => {
  // Calls that reach the ledger in separate callbacks of one event-loop turn (several HTTP sessions).
  const callsOfOneTurn = async (store: ReturnType<typeof sqliteStore>): Promise<{ transactions: number; statuses: string[] }> => {
    const { ledger } = await notesLedger({ store });
    const { token } = await ledger.issue({ tools: ['notes.write'], resources: ['notes:/drafts/'], expiresAt: Date.now() + hour, budget: { calls: 10, inputBytes: 10_000 } });
    const exclusive = jest.spyOn(store, 'exclusive');
    const calls: Promise<{ status: string }>[] = [];
    for (let i = 0; i < 4; i++) {
      calls.push(ledger.invoke(token, 'notes.write', { path: `drafts/${i}`, text: 'x' }));
      await Promise.resolve();
    }
    const statuses = (await Promise.all(calls)).map((o) => o.status);
    const transactions = exclusive.mock.calls.length;
    expect(verify(ledger.events()).ok).toBe(true);
    await ledger.close();
    return { transactions, statuses };
  };

  it('gathers batches only when asked, and never in :memory: (nothing to flush)', () => {
    const stores = [sqliteStore({ path: tmp.file('asked.sqlite'), groupCommit: true }), sqliteStore({ path: tmp.file('default.sqlite') }), sqliteStore({ path: ':memory:', groupCommit: true })];
    expect(stores.map((s) => s.gathersBatches)).toEqual([true, false, false]);
    for (const s of stores) s.close();
    expect(() => sqliteStore({ path: tmp.file('x.sqlite'), groupCommit: 'yes' as unknown as boolean })).toThrow(TypeError);
  });

  it('admits the calls of one event-loop turn in one transaction with groupCommit', async () => {
    const { transactions, statuses } = await callsOfOneTurn(sqliteStore({ path: tmp.file('group.sqlite'), groupCommit: true }));
    expect(statuses).toEqual(['completed', 'completed', 'completed', 'completed']);
    expect(transactions).toBe(2); // the four admissions together, then the four settlements together
  });

  it('commits each call on its own by default (a batch starts on a microtask)', async () => {
    const { transactions } = await callsOfOneTurn(sqliteStore({ path: tmp.file('alone.sqlite') }));
    expect(transactions).toBeGreaterThan(2);
  });
});

describe('the events table', () => {
  it('stores the canonical JSON body with its indexed columns', async () => {
    const file = tmp.file('columns.sqlite');
    const { ledger } = await notesLedger({ store: sqliteStore({ path: file }) });
    const { token, grantId } = await ledger.issue({ tools: ['notes.write'], resources: ['notes:/drafts/'], expiresAt: Date.now() + hour, budget: { calls: 1, inputBytes: 1000 } });
    await ledger.invoke(token, 'notes.write', { path: 'drafts/a', text: 'x' });
    await ledger.invoke(token, 'notes.write', { path: 'drafts/b', text: 'x' });
    const events = ledger.events();
    await ledger.close();
    const db = new Database(file, { readonly: true });
    const rejected = db.prepare("SELECT * FROM events WHERE type = 'call.rejected'").get() as Record<string, unknown>;
    db.close();
    const event = events.find((e) => e.type === 'call.rejected');
    expect(rejected).toMatchObject({ grant_id: grantId, tool: 'notes.write', reason: 'call_budget_exhausted', input_bytes: expect.any(Number), hash: event?.hash });
    expect(JSON.parse(rejected.body as string)).toEqual(event);
  });

  it('refuses an append that does not continue the stored chain', () => {
    const store = sqliteStore({ path: ':memory:' });
    const first = toolEvent(1);
    store.append([first]);
    expect(() => store.append([toolEvent(2)])).toThrow(LedgerError); // prevHash is genesis, not event 1's hash
    expect(() => store.append([toolEvent(3, { seq: 2, hash: first.hash })])).toThrow(/does not continue/); // a gap (no seq 2)
    expect(Array.from(store.load())).toEqual([first]);
    store.close();
  });
});

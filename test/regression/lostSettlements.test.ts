import { existsSync, readdirSync } from 'node:fs';
import Database from 'better-sqlite3';
import { createLedger, memoryStore, sqliteStore, verify, type EventStore, type Ledger, type LedgerEvent } from '../../src';
import { manualClock } from '../support/fixtures';
import { sqliteTempDir } from '../support/sqliteFiles';

// Regression (issue 10, defect 2): when `append` threw while a tool ran, `invoke` still resolved,
// no call.completed/call.failed was ever written and the call stayed in flight forever (after a
// reopen too), with an `onToolError: 'refund'` refund lost. Settlements are now retried until they
// land, `invoke` resolves only then, and what a closed or crashed ledger kept is settled on the next open.

/** A memory store whose appends fail while `failures` > 0 (each failure counts down), or while `down`. */
function flakyStore(): EventStore & { failures: number; down: boolean; appends: number; readonly log: LedgerEvent[] } {
  const inner = memoryStore();
  const log = inner.load() as LedgerEvent[];
  return {
    failures: 0,
    down: false,
    appends: 0,
    log,
    load: () => inner.load(),
    append(events) {
      this.appends++;
      if (this.down) throw new Error('store down');
      if (this.failures > 0) {
        this.failures--;
        throw new Error('store failed');
      }
      inner.append(events);
    },
  };
}

const hour = 3_600_000;

async function withTool(ledger: Ledger, run: () => unknown): Promise<string> {
  await ledger.registerTool({ name: 'work', inputSchema: { type: 'object' }, run });
  const { token } = await ledger.issue({ tools: ['work'], expiresAt: manualClock().now() + hour, budget: { calls: 10, inputBytes: 1_000 } });
  return token;
}

/** Resolves once `check` holds, looking again on every timer turn (the ledger retries on timers). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 2));
}

const settlements = (events: readonly LedgerEvent[]): LedgerEvent[] => events.filter((e) => e.type === 'call.completed' || e.type === 'call.failed');

describe('regression: settlements lost when the store fails', () => {
  it('retries a settlement the store refused three times and resolves invoke only once it is in the log', async () => {
    const store = flakyStore();
    const ledger = createLedger({ store, clock: manualClock().now });
    const token = await withTool(ledger, () => {
      store.failures = 3;
      return 'done';
    });
    let resolved = false;
    const appendsBefore = store.appends;
    const outcome = await ledger.invoke(token, 'work', {}).then((o) => ((resolved = true), o));
    expect(resolved).toBe(true);
    expect(outcome).toMatchObject({ status: 'completed', value: 'done' });
    expect(store.appends - appendsBefore).toBe(1 + 4); // the admission, three refused settlements, the one that landed
    expect(settlements(store.log)).toHaveLength(1);
    expect(ledger.inFlight()).toEqual([]);
    expect(verify(ledger.events()).ok).toBe(true);
  });

  it('does not resolve invoke while the settlement is still refused', async () => {
    const store = flakyStore();
    const ledger = createLedger({ store, clock: manualClock().now });
    const token = await withTool(ledger, () => {
      store.down = true;
      return 'done';
    });
    let resolved = false;
    const pending = ledger.invoke(token, 'work', {}).then((o) => ((resolved = true), o));
    const appendsAtStart = store.appends;
    await until(() => store.appends >= appendsAtStart + 4);
    expect(resolved).toBe(false);
    expect(ledger.inFlight()).toHaveLength(1);
    store.down = false;
    await expect(pending).resolves.toMatchObject({ status: 'completed' });
    expect(settlements(store.log)).toHaveLength(1);
    await ledger.close();
  });

  it('keeps the refund of a failed call (onToolError: refund) through store failures', async () => {
    const store = flakyStore();
    const ledger = createLedger({ store, clock: manualClock().now, onToolError: 'refund' });
    const token = await withTool(ledger, () => {
      store.failures = 2;
      throw new Error('tool broke');
    });
    await expect(ledger.invoke(token, 'work', {})).resolves.toMatchObject({ status: 'failed' });
    const grantId = (store.log.find((e) => e.type === 'grant.issued') as Extract<LedgerEvent, { type: 'grant.issued' }>).grantId;
    expect(ledger.usage(grantId).calls.used).toBe(0);
    expect(settlements(store.log)).toMatchObject([{ type: 'call.failed', refunded: { calls: 1 } }]);
  });

  it('settles on the next open what a ledger closed while the store was down could not', async () => {
    const store = flakyStore();
    const first = createLedger({ store, clock: manualClock().now });
    const token = await withTool(first, () => {
      store.down = true;
      return 'done';
    });
    const pending = first.invoke(token, 'work', {});
    await until(() => first.inFlight().length === 1 && store.appends > 3);
    await first.close();
    // The journal holds the settlement: invoke reports the tool's outcome, the call stays reserved.
    await expect(pending).resolves.toMatchObject({ status: 'completed', value: 'done' });
    expect(settlements(store.log)).toHaveLength(0);
    store.down = false;
    const second = createLedger({ store, clock: manualClock().now });
    await second.registerTool({ name: 'work', inputSchema: { type: 'object' }, run: () => 'again' }); // queued after the kept settlement
    expect(settlements(store.log)).toMatchObject([{ type: 'call.completed', tool: 'work' }]);
    expect(second.inFlight()).toEqual([]);
    expect(verify(second.events()).ok).toBe(true);
    await second.close();
  });
});

describe('regression: settlements lost when the SQLite store fails', () => {
  const tmp = sqliteTempDir();
  afterAll(() => tmp.cleanup());

  const journalHasEntries = (path: string): boolean => existsSync(`${path}-settlements`) && readdirSync(`${path}-settlements`).some((n) => n.endsWith('.json'));

  it('retries a settlement refused with SQLITE_FULL (max_page_count) until space is back', async () => {
    const path = tmp.file('full.sqlite');
    // Small pages: every event row needs a new page, so a cap at the current size refuses the next one.
    const init = new Database(path);
    init.pragma('page_size = 512');
    init.exec('VACUUM');
    init.close();
    const store = sqliteStore({ path });
    const db = (store as unknown as { db: Database.Database }).db;
    const ledger = createLedger({ store, clock: manualClock().now });
    const token = await withTool(ledger, () => {
      db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
      return 'done';
    });
    let resolved = false;
    const pending = ledger.invoke(token, 'work', {}).then((o) => ((resolved = true), o));
    await until(() => journalHasEntries(path));
    expect(resolved).toBe(false);
    expect(() => db.exec('CREATE TABLE probe (x)')).toThrow(expect.objectContaining({ code: 'SQLITE_FULL' }));
    db.pragma('max_page_count = 1073741823');
    await expect(pending).resolves.toMatchObject({ status: 'completed' });
    expect(settlements(ledger.events())).toHaveLength(1);
    expect(journalHasEntries(path)).toBe(false);
    await ledger.close();
  });

  it('retries a settlement while a second writer holds the lock past the busy timeout', async () => {
    const path = tmp.file('busy.sqlite');
    const ledger = createLedger({ store: sqliteStore({ path, busyTimeoutMs: 20 }), clock: manualClock().now });
    const other = new Database(path);
    const token = await withTool(ledger, () => {
      other.exec('BEGIN IMMEDIATE');
      return 'done';
    });
    let resolved = false;
    const pending = ledger.invoke(token, 'work', {}).then((o) => ((resolved = true), o));
    await until(() => journalHasEntries(path));
    expect(resolved).toBe(false);
    other.exec('COMMIT');
    other.close();
    await expect(pending).resolves.toMatchObject({ status: 'completed' });
    expect(settlements(ledger.events())).toHaveLength(1);
    await ledger.close();
  });

  it('settles on the next open what a crashed ledger kept in the journal', async () => {
    const path = tmp.file('crash.sqlite');
    const crashedStore = sqliteStore({ path, busyTimeoutMs: 20 });
    const crashed = createLedger({ store: crashedStore, clock: manualClock().now });
    const other = new Database(path);
    const token = await withTool(crashed, () => {
      other.exec('BEGIN IMMEDIATE');
      return 'done';
    });
    const pending = crashed.invoke(token, 'work', {});
    await until(() => journalHasEntries(path));
    // The process "dies": its connection is gone, it never appends again.
    crashedStore.close();
    other.exec('COMMIT');
    other.close();
    const reopened = createLedger({ store: sqliteStore({ path }), clock: manualClock().now });
    expect(reopened.inFlight()).toHaveLength(1);
    await reopened.registerTool({ name: 'work', inputSchema: { type: 'object' }, run: () => 'again' });
    expect(settlements(reopened.events())).toMatchObject([{ type: 'call.completed' }]);
    expect(reopened.inFlight()).toEqual([]);
    expect(verify(reopened.events()).ok).toBe(true);
    await reopened.close();
    await crashed.close(); // ends the dead ledger's retries; its settlement was taken over
    await expect(pending).resolves.toMatchObject({ status: 'completed' });
  });
});

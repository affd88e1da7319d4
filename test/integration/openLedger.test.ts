import { createLedger, LedgerError, memoryStore, openLedger, replay, sqliteStore, verify } from '../../src';
import { AsyncMemoryStore } from '../support/asyncMemoryStore';
import { sqliteTempDir } from '../support/sqliteFiles';

const hour = 3_600_000;
const echo = { name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } }, run: (a: { text?: string }) => a.text ?? null };
const tmp = sqliteTempDir();
afterAll(() => tmp.cleanup());

describe('openLedger with synchronous stores', () => {
  it('opens a memory ledger that behaves as createLedger’s', async () => {
    const ledger = await openLedger({ store: memoryStore() });
    await ledger.registerTool(echo);
    const { token } = await ledger.issue({ tools: ['echo'], expiresAt: Date.now() + hour, budget: { calls: 1, inputBytes: 100 } });
    expect(await ledger.invoke(token, 'echo', { text: 'a' })).toMatchObject({ status: 'completed', value: 'a' });
    expect(await ledger.invoke(token, 'echo', { text: 'a' })).toMatchObject({ status: 'rejected', reason: 'call_budget_exhausted' });
    await ledger.close();
  });

  it('reopens a SQLite log to the state it had', async () => {
    const file = tmp.file('open.sqlite');
    const first = await openLedger({ store: sqliteStore({ path: file }) });
    await first.registerTool(echo);
    const state = first.state();
    await first.close();
    const again = await openLedger({ store: sqliteStore({ path: file }) });
    expect(again.state()).toEqual(state);
    await again.close();
  });
});

describe('openLedger with an asynchronous store', () => {
  it('is the only way to open one: createLedger refuses it', () => {
    expect(() => createLedger({ store: new AsyncMemoryStore() })).toThrow(/openLedger/);
  });

  it('decides calls in one serialized stream: a burst never goes over budget, and the log verifies', async () => {
    const store = new AsyncMemoryStore();
    const ledger = await openLedger({ store });
    await ledger.registerTool(echo);
    const { token } = await ledger.issue({ tools: ['echo'], expiresAt: Date.now() + hour, budget: { calls: 5, inputBytes: 10_000 } });
    const outcomes = await Promise.all(Array.from({ length: 40 }, () => ledger.invoke(token, 'echo', { text: 'x' })));
    expect(outcomes.filter((o) => o.status === 'completed')).toHaveLength(5);
    expect(verify(store.log)).toMatchObject({ ok: true });
    expect(ledger.events()).toEqual(store.log);
    expect(ledger.state()).toEqual(replay(store.log));
    await ledger.close();
  });

  it('fails a call closed when the store fails (the tool never runs), rejects a host command with LedgerError, then recovers', async () => {
    const store = new AsyncMemoryStore();
    const ledger = await openLedger({ store });
    let runs = 0;
    await ledger.registerTool({ ...echo, run: () => ++runs });
    const { token } = await ledger.issue({ tools: ['echo'], expiresAt: Date.now() + hour, budget: { calls: 5, inputBytes: 10_000 } });
    const before = ledger.state();
    store.failNext = 1;
    expect(await ledger.invoke(token, 'echo', {})).toMatchObject({ status: 'rejected', reason: 'ledger_unavailable' });
    expect(runs).toBe(0);
    expect(ledger.state()).toBe(before);
    store.failNext = 1;
    await expect(ledger.issue({ tools: ['echo'], expiresAt: Date.now() + hour, budget: { calls: 1, inputBytes: 1 } })).rejects.toBeInstanceOf(LedgerError);
    expect(await ledger.invoke(token, 'echo', {})).toMatchObject({ status: 'completed' });
    await ledger.close();
  });

  it('gives each batch the deadline of its oldest request: time queued behind a stalled batch counts', async () => {
    const store = new AsyncMemoryStore([], 5_000);
    const ledger = await openLedger({ store });
    await ledger.registerTool(echo);
    const { token } = await ledger.issue({ tools: ['echo'], expiresAt: Date.now() + hour, budget: { calls: 5, inputBytes: 10_000 } });
    let release!: () => void;
    store.hold = new Promise((resolve) => (release = resolve));
    const from = store.deadlines.length;
    const queuedFirst = performance.now();
    const first = ledger.invoke(token, 'echo', {});
    await Promise.resolve();
    const second = ledger.invoke(token, 'echo', {});
    const queuedSecond = performance.now();
    await new Promise((resolve) => setImmediate(resolve));
    const releasedAt = performance.now();
    release();
    await first;
    store.hold = undefined;
    await second;
    const [firstDeadline, secondDeadline] = store.deadlines.slice(from, from + 2) as [number, number];
    expect(firstDeadline).toBeGreaterThanOrEqual(queuedFirst + 5_000);
    expect(secondDeadline).toBeLessThanOrEqual(queuedSecond + 5_000);
    expect(secondDeadline).toBeLessThan(releasedAt + 5_000);
    await ledger.close();
  });

  it('folds events another host appended without being asked, and publishes them', async () => {
    const log = [] as AsyncMemoryStore['log'];
    const a = await openLedger({ store: new AsyncMemoryStore(log) });
    const b = await openLedger({ store: new AsyncMemoryStore(log) });
    const seen = new Promise((resolve) => b.events$.subscribe((e) => e.type === 'tool.registered' && resolve(e)));
    await a.registerTool(echo);
    expect(await seen).toMatchObject({ tool: 'echo', seq: 1 });
    expect(b.events()).toEqual(log);
    await a.close();
    await b.close();
  });
});

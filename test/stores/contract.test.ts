import { isDeepStrictEqual } from 'node:util';
import { filter, firstValueFrom } from 'rxjs';
import { canonicalJson, eventHash, grantOf, LedgerError, openLedger, replay, verify, type Ledger, type LedgerEvent } from '../../src';
import { manualClock } from '../support/fixtures';
import { storeFactories, type LogOptions, type LogUnderTest, type StoreCapability, type StoreFactory } from '../support/storeFactories';

// The event-store contract, run against every store the package ships (test/support/storeFactories.ts).
// A store is done when this suite passes on it (docs/stores.md). What only one store does (its
// file format, pragmas, roles, pools) stays in that store's own tests.

const hour = 3_600_000;
const echoTool = { name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } }, run: (args: { text?: string }) => args.text ?? null } as const;
const meteredTool = {
  name: 'llm.complete',
  inputSchema: { type: 'object', properties: { used: { type: 'integer' } }, required: ['used'] },
  cost: () => ({ usd_micros: 1_000 }),
  run: (args: { used: number }, ctx: { report: (amounts: Record<string, number>) => void }) => ctx.report({ usd_micros: args.used }),
};

const settlements = (events: readonly LedgerEvent[]): LedgerEvent[] => events.filter((e) => e.type === 'call.completed' || e.type === 'call.failed');

/** Reads `ledger` (which folds what other writers appended) on every timer turn until `settled` resolves. */
async function following<T>(ledger: Ledger, settled: Promise<T>): Promise<T> {
  let done = false;
  const result = settled.finally(() => (done = true));
  while (!done) {
    ledger.inFlight();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return result;
}

/** A ledger on `log` with an echo tool and a grant of `calls` calls. */
async function echoLedger(log: LogUnderTest, calls: number, options: LogOptions = {}): Promise<{ ledger: Ledger; token: string; grantId: string }> {
  const ledger = await openLedger({ store: log.store(options) });
  await ledger.registerTool(echoTool);
  const { token, grantId } = await ledger.issue({ tools: ['echo'], expiresAt: Date.now() + hour, budget: { calls, inputBytes: 100_000 } });
  return { ledger, token, grantId };
}

/** A fresh log of `factory` holding the echo tool, a grant and `calls` completed calls, its ledger closed. */
async function loggedCalls(factory: StoreFactory, calls: number, options: LogOptions): Promise<LogUnderTest> {
  const log = factory.fresh();
  const { ledger, token } = await echoLedger(log, 100, options);
  for (let i = 0; i < calls; i++) await ledger.invoke(token, 'echo', { text: 'x' });
  await ledger.close(); // waits for a snapshot being written
  return log;
}

function appendAndLoad(factory: StoreFactory): void {
  it('a ledger opened again on the log holds the state replay gives and the same usage, and the stored log verifies', async () => {
    const log = factory.fresh();
    const { ledger, token, grantId } = await echoLedger(log, 3);
    const outcomes = await Promise.all(Array.from({ length: 5 }, (_, i) => ledger.invoke(token, 'echo', { text: `t${i}` })));
    expect(outcomes.filter((o) => o.status === 'completed')).toHaveLength(3);
    const before = ledger.state();
    await ledger.close();

    const reopened = await openLedger({ store: log.store() });
    expect(reopened.state()).toEqual(before);
    expect(reopened.state()).toEqual(replay(reopened.events()));
    expect(verify(reopened.events())).toMatchObject({ ok: true, problems: [] });
    expect(reopened.usage(grantId).calls).toEqual({ limit: 3, used: 3 });
    await reopened.close();
  });

  it('a ledger opened again appends from the stored head: seqs without a gap, chained to the head it found', async () => {
    const log = factory.fresh();
    const { ledger, token } = await echoLedger(log, 5);
    await ledger.invoke(token, 'echo', { text: 'a' });
    const head = ledger.events().at(-1) as LedgerEvent;
    await ledger.close();

    const reopened = await openLedger({ store: log.store() });
    await reopened.registerTool(echoTool);
    await reopened.invoke(token, 'echo', { text: 'b' });
    const events = reopened.events();
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events[head.seq]).toMatchObject({ seq: head.seq + 1, prevHash: head.hash });
    expect(await log.storedCount()).toBe(events.length);
    expect(verify(events).ok).toBe(true);
    await reopened.close();
  });
}

function chainCheckedOnOpen(factory: StoreFactory): void {
  /** 12 events, no snapshot: open checks the whole chain. */
  const twelveEvents = (): Promise<LogUnderTest> => loggedCalls(factory, 5, { snapshotEvery: 0 });

  it('refuses to open a log whose stored event was edited, naming its seq', async () => {
    const log = await twelveEvents();
    await log.tamper(5, (body) => body.replace('"echo"', '"ecko"'));
    await expect(openLedger({ store: log.store() })).rejects.toEqual(new LedgerError('invalid_log', "stored log's hash chain breaks at seq 5"));
  });

  it('refuses an edited event whose hash was recomputed, at the next seq', async () => {
    const log = await twelveEvents();
    await log.tamper(5, (body) => {
      const edited = { ...(JSON.parse(body) as LedgerEvent), at: 1 };
      return canonicalJson({ ...edited, hash: eventHash(edited) });
    });
    await expect(openLedger({ store: log.store() })).rejects.toEqual(new LedgerError('invalid_log', "stored log's hash chain breaks at seq 6"));
  });
}

function guardedLog(factory: StoreFactory): void {
  it('applies each migration once, also when several ledgers open a fresh log at the same time', async () => {
    const alone = factory.fresh();
    await (await openLedger({ store: alone.store() })).close();
    const expected = await alone.appliedMigrations();
    expect(expected.map((m) => m.id)).toEqual(expected.map((_, i) => i + 1));

    const log = factory.fresh();
    const ledgers = await Promise.all(Array.from({ length: 5 }, () => openLedger({ store: log.store() })));
    expect(await log.appliedMigrations()).toEqual(expected);
    await Promise.all(ledgers.map((l) => l.close()));
  });

  it('refuses every statement that would change or remove stored events', async () => {
    const log = factory.fresh();
    const { ledger } = await echoLedger(log, 1);
    await ledger.close();
    const refused = await log.changeStoredEvents();
    expect(refused.map((r) => r.verb)).toEqual(expect.arrayContaining(['UPDATE', 'DELETE']));
    for (const { verb, error } of refused) expect(String(error)).toContain(`events are append-only: ${verb} refused`);
    expect(await log.storedCount()).toBe(2);
  });

  it('fails a call closed while another holds the log’s write lock past the store’s wait: ledger_unavailable, no tool run, nothing appended; then admits again', async () => {
    const log = factory.fresh();
    const { ledger: setup, token } = await echoLedger(log, 5);
    await setup.close();
    let runs = 0;
    const ledger = await openLedger({ store: log.store({ lockWaitMs: 2_000 }) });
    await ledger.registerTool({ ...echoTool, run: () => void runs++ });
    const stored = await log.storedCount();
    const release = await log.holdWriteLock();
    try {
      expect(await ledger.invoke(token, 'echo', {})).toMatchObject({ status: 'rejected', reason: 'ledger_unavailable' });
    } finally {
      await release();
    }
    expect(runs).toBe(0);
    expect(await log.storedCount()).toBe(stored);
    expect(await ledger.invoke(token, 'echo', {})).toMatchObject({ status: 'completed' });
    expect(runs).toBe(1);
    expect(verify(ledger.events()).ok).toBe(true);
    await ledger.close();
  });
}

function snapshots(factory: StoreFactory): void {
  // Meters used and rate-window times live in the grant records: a snapshot must carry them, so a
  // ledger opened from one decides exactly as the full fold would.
  it('a snapshot round-trips meters used and rate windows, and the ledger opened from it decides from them', async () => {
    const log = factory.fresh();
    const clock = manualClock();
    const first = await openLedger({ clock: clock.now, store: log.store({ snapshotEvery: 4 }) });
    await first.registerTool(meteredTool);
    const root = await first.issue({ tools: ['llm.complete'], expiresAt: clock.now() + hour, budget: { calls: 100, inputBytes: 100_000, meters: { usd_micros: 10_000 }, rate: { calls: 5, windowMs: 60_000 } } });
    const child = await first.attenuate(root.token, { budget: { meters: { usd_micros: 5_000 }, rate: { calls: 2, windowMs: 1_000 } } });
    if (child.status !== 'issued') throw new Error(child.reason);
    for (let i = 0; i < 4; i++) {
      clock.advance(10);
      await first.invoke(i % 2 === 0 ? root.token : child.token, 'llm.complete', { used: 100 * (i + 1) });
    }
    await first.close(); // waits for a snapshot being written

    const store = log.store({ snapshotEvery: 0 });
    const second = await openLedger({ clock: clock.now, store });
    expect(log.openedFromSnapshotSeq(store)).toBeGreaterThan(0);
    await second.registerTool(meteredTool);
    expect(isDeepStrictEqual(second.state(), replay(second.events()))).toBe(true);
    expect(second.usage(root.grantId).meters).toEqual({ usd_micros: { limit: 10_000, used: 1_000 } });
    expect(second.usage(root.grantId).rate).toEqual({ limit: 5, windowMs: 60_000, inWindow: 4 });
    clock.advance(10);
    expect(await second.invoke(root.token, 'llm.complete', { used: 1 })).toMatchObject({ status: 'completed' });
    expect(await second.invoke(child.token, 'llm.complete', { used: 1 })).toMatchObject({ status: 'rejected', reason: 'rate_limited', retryAfterMs: 60_000 - 50 + 10 });
    expect(verify(second.events()).ok).toBe(true);
    await second.close();
  });

  it('opens from the newest snapshot bound to the stored log, to the state a full replay gives', async () => {
    const log = await loggedCalls(factory, 12, { snapshotEvery: 10 });
    const seqs = await log.snapshotSeqs();
    expect(seqs.length).toBeGreaterThan(0);

    const store = log.store();
    const reopened = await openLedger({ store });
    expect(log.openedFromSnapshotSeq(store)).toBe(seqs.at(-1));
    expect(reopened.state()).toEqual(replay(reopened.events()));
    await reopened.close();
  });

  it('does not hide an event edited after the newest snapshot: open refuses the log', async () => {
    const log = await loggedCalls(factory, 12, { snapshotEvery: 10 });
    // One more event through a store that writes no snapshot: whichever batch the last snapshot came
    // after (a store may skip or delay one), the head is then past it.
    const more = await openLedger({ store: log.store({ snapshotEvery: 1_000_000 }) });
    await more.issue({ tools: ['echo'], expiresAt: Date.now() + hour, budget: { calls: 1, inputBytes: 100 } });
    await more.close();
    const newest = (await log.snapshotSeqs()).at(-1) as number;
    const head = await log.storedCount();
    expect(head).toBeGreaterThan(newest);
    await log.tamper(head, (body) => body.replace(/"at":\d+/, '"at":1'));
    await expect(openLedger({ store: log.store() })).rejects.toMatchObject({ code: 'invalid_log' });
  });
}

function sharedWriters(factory: StoreFactory): void {
  it('two ledgers on one log share a meter: neither can reserve what the other holds', async () => {
    const log = factory.fresh();
    const a = await openLedger({ store: log.store() });
    const b = await openLedger({ store: log.store() });
    let release: (() => void) | undefined;
    await a.registerTool({ name: 'slow', inputSchema: { type: 'object' }, cost: () => ({ usd_micros: 60 }), run: () => new Promise<string>((r) => (release = () => r('ok'))) });
    await b.registerTool({ name: 'slow', inputSchema: { type: 'object' }, cost: () => ({ usd_micros: 60 }), run: () => 'ok' });
    const { token, grantId } = await a.issue({ tools: ['slow'], expiresAt: Date.now() + hour, budget: { calls: 10, inputBytes: 1_000, meters: { usd_micros: 100 } } });
    const held = a.invoke(token, 'slow', {});
    while (release === undefined) await new Promise((r) => setTimeout(r, 5));
    expect(await b.invoke(token, 'slow', {})).toMatchObject({ status: 'rejected', reason: 'meter_budget_exhausted', meter: 'usd_micros' });
    release();
    expect(await held).toMatchObject({ status: 'completed' });
    expect(await b.invoke(token, 'slow', {})).toMatchObject({ status: 'rejected', reason: 'meter_budget_exhausted' });
    expect(b.usage(grantId).meters).toEqual({ usd_micros: { limit: 100, used: 60 } });
    await a.close();
    await b.close();
  });

  it('a ledger follows another’s events without a command of its own, and a revocation with abortInFlight there aborts a call running here', async () => {
    const log = factory.fresh();
    const a = await openLedger({ store: log.store() });
    const b = await openLedger({ store: log.store() });
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
    expect(await following(b, issuedSeen)).toMatchObject({ grantId });
    const call = b.invoke(token, 'wait', {});
    await running;
    await a.revoke(grantId, { abortInFlight: true });
    expect(await following(b, call)).toMatchObject({ status: 'failed' });
    expect(grantOf(b.state(), grantId)?.revoked).toBe(true);
    await a.close();
    await b.close();
  });
}

function readonlyStore(factory: StoreFactory): void {
  it('a read-only store opens the log to the state its writer left, and changes nothing', async () => {
    const log = factory.fresh();
    const { ledger, token } = await echoLedger(log, 5);
    await ledger.invoke(token, 'echo', { text: 'a' });
    const events = ledger.events();
    await ledger.close();
    const stored = await log.storedCount();

    const reader = await openLedger({ store: log.store({ readonly: true }) });
    expect(reader.events()).toEqual(events);
    expect(reader.state()).toEqual(replay(events));
    await reader.close();
    expect(await log.storedCount()).toBe(stored);
  });
}

function settlementJournal(factory: StoreFactory): void {
  it('settles on the next open what a ledger closed while another held the log’s lock could not, with the tool’s meter report', async () => {
    const log = factory.fresh();
    const ledger = await openLedger({ store: log.store({ lockWaitMs: 2_000 }) });
    let release: (() => Promise<void>) | undefined;
    let callId = '';
    await ledger.registerTool({
      name: 'work',
      inputSchema: { type: 'object' },
      cost: () => ({ usd_micros: 50 }),
      run: async (_args, ctx) => {
        callId = ctx.callId;
        ctx.report({ usd_micros: 30 });
        release = await log.holdWriteLock();
        return 'done';
      },
    });
    const { token, grantId } = await ledger.issue({ tools: ['work'], expiresAt: Date.now() + hour, budget: { calls: 5, inputBytes: 1_000, meters: { usd_micros: 100 } } });
    const stored = await log.storedCount();
    const invoked = ledger.invoke(token, 'work', {});
    try {
      // close() gives the settlement one more try; the log is locked, so the journal keeps it.
      await ledger.close();
      expect(await invoked).toMatchObject({ status: 'completed', value: 'done' });
      expect(await log.storedCount()).toBe(stored + 1); // the admission, not the settlement
    } finally {
      await release?.();
    }

    const taker = await openLedger({ store: log.store() });
    await taker.close();
    const reopened = await openLedger({ store: log.store() });
    const settled = settlements(reopened.events());
    expect(settled).toEqual([expect.objectContaining({ type: 'call.completed', callId, charged: { usd_micros: 30 } })]);
    expect(reopened.usage(grantId).meters).toEqual({ usd_micros: { limit: 100, used: 30 } });
    expect(reopened.inFlight()).toEqual([]);
    expect(verify(reopened.events()).ok).toBe(true);
    await reopened.close();
  });
}

const sections: readonly [StoreCapability | 'every store', string, (factory: StoreFactory) => void][] = [
  ['every store', 'append, load and head', appendAndLoad],
  ['every store', 'the hash chain, checked on open', chainCheckedOnOpen],
  ['durable', 'a log the store guards (migrations, append-only, fail closed)', guardedLog],
  ['snapshots', 'snapshots', snapshots],
  ['sharedWriters', 'several writers on one log (admission, catch-up)', sharedWriters],
  ['readonly', 'read-only', readonlyStore],
  ['journal', 'the settlement journal', settlementJournal],
];

for (const factory of storeFactories) {
  factory.describe(`the event-store contract on the ${factory.name} store`, () => {
    afterAll(() => factory.cleanup());
    for (const [needs, title, section] of sections) {
      // A section the store does not offer is not registered (its factory says so in `offers`).
      if (needs === 'every store' || factory.offers.has(needs)) describe(title, () => section(factory));
    }
  });
}

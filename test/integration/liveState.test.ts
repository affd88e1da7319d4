import fc from 'fast-check';
import { createLedger, replay, type EventStore, type LedgerEvent, type Ledger } from '../../src';
import { memoryStore } from '../../src/stores/memoryStore';
import { LiveState, liveEventsMax } from '../../src/stream/liveState';
import { manualClock } from '../support/fixtures';

// The in-memory ledger keeps one fold open across batches (src/stream/liveState.ts): what it hands
// out must still be frozen and never change, and a batch whose append fails must leave no trace.

/** A memory store whose append can be made to fail (before it takes anything). */
function flakyStore(): EventStore & { failing: boolean; readonly log: readonly LedgerEvent[] } {
  const inner = memoryStore();
  const store = {
    failing: false,
    get log(): readonly LedgerEvent[] {
      return Array.from(inner.load());
    },
    load: () => inner.load(),
    append(events: readonly LedgerEvent[]): void {
      if (store.failing) throw new Error('disk full');
      inner.append(events);
    },
  };
  return store;
}

const echo = { name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } }, run: (args: { text?: string }) => args.text ?? null } as const;

async function echoLedger(store: EventStore): Promise<{ ledger: Ledger; token: string; grantId: string; clock: ReturnType<typeof manualClock> }> {
  const clock = manualClock(1_000);
  const ledger = createLedger({ store, clock: clock.now, idempotencyTtlMs: 5 });
  await ledger.registerTool(echo);
  const { token, grantId } = await ledger.issue({ tools: ['echo'], expiresAt: 10_000_000, budget: { calls: 10_000, inputBytes: 1_000_000, meters: { usd: 1_000_000 }, rate: { calls: 500, windowMs: 1 } } });
  return { ledger, token, grantId, clock };
}

function deepFrozen(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true;
  if (!Object.isFrozen(value)) return false;
  return Object.values(value as object).every(deepFrozen);
}

describe('the in-memory ledger\'s state kept open across batches', () => {
  it('hands out a deeply frozen state that later calls never change', async () => {
    const { ledger, token } = await echoLedger(memoryStore());
    for (let i = 0; i < 3; i++) await ledger.invoke(token, 'echo', { text: `a${i}` }, { idempotencyKey: `k${i}` });
    const handedOut = ledger.state();
    const copy = structuredClone(handedOut);
    for (let i = 0; i < 20; i++) await ledger.invoke(token, 'echo', { text: `b${i}` }, { idempotencyKey: `later-${i}` });
    expect(deepFrozen(handedOut)).toBe(true);
    expect(handedOut).toEqual(copy);
    expect(ledger.state()).toEqual(replay(ledger.events()));
    await ledger.close();
  });

  it('leaves no trace of a batch whose append failed: the next calls decide on the state before it', async () => {
    const store = flakyStore();
    const { ledger, token, grantId } = await echoLedger(store);
    expect(await ledger.invoke(token, 'echo', { text: 'a' }, { idempotencyKey: 'first' })).toMatchObject({ status: 'completed' });
    store.failing = true;
    expect(await ledger.invoke(token, 'echo', { text: 'b' }, { idempotencyKey: 'lost' })).toMatchObject({ status: 'rejected', reason: 'ledger_unavailable' });
    store.failing = false;
    // The lost admission reserved nothing and bound no key: the same key is a fresh call now.
    expect(ledger.usage(grantId).calls.used).toBe(1);
    expect(ledger.inFlight()).toEqual([]);
    expect(await ledger.invoke(token, 'echo', { text: 'other' }, { idempotencyKey: 'lost' })).toMatchObject({ status: 'completed', value: 'other' });
    expect(ledger.events()).toEqual(store.log);
    expect(ledger.state()).toEqual(replay(store.log));
    await ledger.close();
  });

  it('equals the replay of its log after any run of calls, failed appends and handed-out states', async () => {
    const step = fc.record({ kind: fc.constantFrom('call' as const, 'keyed' as const, 'retry' as const, 'fail' as const, 'state' as const), n: fc.nat(3) });
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 30 }), async (steps) => {
        const store = flakyStore();
        const { ledger, token, clock } = await echoLedger(store);
        const handedOut: { state: ReturnType<Ledger['state']>; copy: unknown }[] = [];
        for (const [i, s] of steps.entries()) {
          clock.advance(s.n);
          if (s.kind === 'fail') store.failing = !store.failing;
          else if (s.kind === 'state') {
            const state = ledger.state();
            handedOut.push({ state, copy: structuredClone(state) });
          } else if (s.kind === 'call') await ledger.invoke(token, 'echo', { text: `t${s.n}` });
          else await ledger.invoke(token, 'echo', { text: `t${s.n}` }, { idempotencyKey: `k${s.kind === 'retry' ? s.n : i}` });
          expect(ledger.events()).toEqual(store.log);
        }
        store.failing = false;
        expect(ledger.state()).toEqual(replay(store.log));
        for (const { state, copy } of handedOut) expect(state).toEqual(copy);
        await ledger.close();
      }),
      { numRuns: 60 },
    );
  });
});

describe('LiveState', () => {
  it('freezes on its own once liveEventsMax events were applied, so a rollback re-folds at most that many', async () => {
    const { ledger, token, clock } = await echoLedger(memoryStore());
    for (let i = 0; i * 2 < liveEventsMax + 10; i++) {
      clock.advance(1);
      expect(await ledger.invoke(token, 'echo', { text: `${i}` })).toMatchObject({ status: 'completed' });
    }
    const events = ledger.events();
    const live = new LiveState(replay(events.slice(0, 2)));
    let most = 0;
    for (const [i, event] of events.slice(2).entries()) {
      live.apply(event);
      live.landed();
      most = Math.max(most, live.mark());
      if (i + 1 === liveEventsMax) expect(live.mark()).toBe(0);
    }
    expect(most).toBe(liveEventsMax - 1);
    // A rollback now undoes only what came after the last freeze, back to the state at that point.
    const mark = live.mark();
    expect(mark).toBeGreaterThan(0);
    live.rollback(0);
    expect(live.view).toEqual(replay(events.slice(0, events.length - mark)));
    await ledger.close();
  });

  it('rolls back to the state at the mark, keeping what was applied before it', async () => {
    const { ledger, token } = await echoLedger(memoryStore());
    for (let i = 0; i < 5; i++) await ledger.invoke(token, 'echo', { text: `${i}` });
    const events = ledger.events();
    const live = new LiveState(replay(events.slice(0, 2)));
    for (const event of events.slice(2, 6)) live.apply(event);
    const mark = live.mark();
    for (const event of events.slice(6)) live.apply(event);
    live.rollback(mark);
    expect(live.view).toEqual(replay(events.slice(0, 6)));
    expect(live.mark()).toBe(mark);
    expect(deepFrozen(live.frozen())).toBe(true);
    await ledger.close();
  });
});

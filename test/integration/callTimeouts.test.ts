import { createLedger, memoryStore, openLedger, replay, sqliteStore, verify, type EventStore, type Ledger, type LedgerEvent, type EventOf } from '../../src';
import { given, issueCommand, payloads, registerNotes, T0 } from '../support/given';
import { manualClock, manualTimers } from '../support/fixtures';
import { AsyncMemoryStore } from '../support/asyncMemoryStore';
import { sqliteTempDir } from '../support/sqliteFiles';
import { reseal } from '../support/sealedLog';

/** Timers driven by the test: nothing fires until `fire()` runs what is scheduled now. */
/** Lets the stream's microtasks and promise chains run (no timers involved). */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

/** A tool that never finishes until `release` is called. */
function hangingTool(): { run: (args: unknown, ctx: { signal: AbortSignal }) => Promise<string>; release: (value: string) => void; signals: AbortSignal[] } {
  let release: (value: string) => void = () => undefined;
  const signals: AbortSignal[] = [];
  return {
    signals,
    release: (value) => release(value),
    run: (_args, ctx) => {
      signals.push(ctx.signal);
      return new Promise<string>((resolve) => (release = resolve));
    },
  };
}

const settlements = (events: readonly LedgerEvent[]): LedgerEvent[] => events.filter((e) => e.type === 'call.completed' || e.type === 'call.failed');
const hour = 3_600_000;

async function timedLedger(options: { onToolError?: 'consume' | 'refund'; store?: EventStore; callTimeoutMs?: number } = {}) {
  const clock = manualClock();
  const timers = manualTimers();
  const ledger = createLedger({ clock: clock.now, setTimer: timers.setTimer, ...(options.store ? { store: options.store } : {}), ...(options.onToolError ? { onToolError: options.onToolError } : {}) });
  const tool = hangingTool();
  await ledger.registerTool({ name: 'slow', inputSchema: { type: 'object' }, run: tool.run });
  const { grantId, token } = await ledger.issue({ tools: ['slow'], expiresAt: clock.now() + hour, budget: { calls: 5, inputBytes: 1_000 }, callTimeoutMs: options.callTimeoutMs ?? 1_000 });
  return { ledger, clock, timers, tool, grantId, token };
}

describe('call timeouts: the decider', () => {
  const admitAt = (at: number, grantId = 'g1', callId = 'c1') => ({ type: 'admit' as const, at, callId, grantId, tool: 'notes.write', inputBytes: 10, argumentCheck: 'ok' as const, resourceCheck: 'ok' as const });

  it('records the deadline (admission time + callTimeoutMs) on the admission of a call of a grant with a timeout', () => {
    const g = given(registerNotes, issueCommand({ callTimeoutMs: 500 }));
    expect(payloads(g.when(admitAt(T0 + 1)))).toEqual([expect.objectContaining({ type: 'call.admitted', deadline: T0 + 501 })]);
  });

  it('records no deadline for a grant without a timeout', () => {
    const g = given(registerNotes, issueCommand());
    expect(payloads(g.when(admitAt(T0 + 1)))[0]).not.toHaveProperty('deadline');
  });

  it('refuses a grant whose callTimeoutMs is not a positive safe integer', () => {
    for (const bad of [0, -1, 1.5, Number.MAX_SAFE_INTEGER + 2, '10' as unknown as number]) {
      const decision = given(registerNotes).when(issueCommand({ callTimeoutMs: bad }));
      expect(decision).toMatchObject({ ok: false, code: 'invalid_grant' });
    }
  });

  it('refuses a timeout before the deadline and for a call without one (call_not_due)', () => {
    const timed = given(registerNotes, issueCommand({ callTimeoutMs: 500 }), admitAt(T0 + 1));
    expect(timed.when({ type: 'timeout', at: T0 + 500, callId: 'c1', refund: false })).toMatchObject({ ok: false, code: 'call_not_due' });
    const untimed = given(registerNotes, issueCommand(), admitAt(T0 + 1));
    expect(untimed.when({ type: 'timeout', at: T0 + 10 * hour, callId: 'c1', refund: false })).toMatchObject({ ok: false, code: 'call_not_due' });
  });

  it('settles a call at its deadline as call.failed with timedOut, refunded as the command says', () => {
    const g = given(registerNotes, issueCommand({ callTimeoutMs: 500 }), admitAt(T0 + 1));
    expect(payloads(g.when({ type: 'timeout', at: T0 + 501, callId: 'c1', refund: false }))).toEqual([
      { type: 'call.failed', callId: 'c1', grantId: 'g1', tool: 'notes.write', refunded: { calls: 0, inputBytes: 0 }, timedOut: true },
    ]);
    expect(payloads(g.when({ type: 'timeout', at: T0 + 501, callId: 'c1', refund: true }))[0]).toMatchObject({ refunded: { calls: 1, inputBytes: 10 }, timedOut: true });
  });

  it('refuses a timeout of a call already settled (unknown_call): a late result finds nothing either', () => {
    const g = given(registerNotes, issueCommand({ callTimeoutMs: 500 }), admitAt(T0 + 1), { type: 'timeout', at: T0 + 600, callId: 'c1', refund: false });
    expect(g.when({ type: 'timeout', at: T0 + 700, callId: 'c1', refund: false })).toMatchObject({ ok: false, code: 'unknown_call' });
    expect(g.when({ type: 'settle', at: T0 + 700, callId: 'c1', outcome: 'completed', refund: false })).toMatchObject({ ok: false, code: 'unknown_call' });
  });
});

describe('call timeouts: attenuation', () => {
  async function parent(callTimeoutMs?: number) {
    const clock = manualClock();
    const ledger = createLedger({ clock: clock.now, setTimer: manualTimers().setTimer });
    await ledger.registerTool({ name: 'slow', inputSchema: { type: 'object' }, run: () => 'ok' });
    const { token } = await ledger.issue({ tools: ['slow'], expiresAt: clock.now() + hour, budget: { calls: 5, inputBytes: 1_000 }, ...(callTimeoutMs !== undefined ? { callTimeoutMs } : {}) });
    const scopeOf = (grantId: string) => (ledger.events().find((e) => e.type === 'grant.issued' && e.grantId === grantId) as EventOf<'grant.issued'>).scope;
    return { ledger, token, scopeOf };
  }

  it('gives a child its parent timeout by default and accepts a shorter one', async () => {
    const { ledger, token, scopeOf } = await parent(1_000);
    const inherit = await ledger.attenuate(token, {});
    const shorter = await ledger.attenuate(token, { callTimeoutMs: 200 });
    expect(inherit.status === 'issued' && scopeOf(inherit.grantId).callTimeoutMs).toBe(1_000);
    expect(shorter.status === 'issued' && scopeOf(shorter.grantId).callTimeoutMs).toBe(200);
    expect(verify(ledger.events()).ok).toBe(true);
  });

  it('refuses a child timeout longer than the parent one (attenuation_widens)', async () => {
    const { ledger, token } = await parent(1_000);
    await expect(ledger.attenuate(token, { callTimeoutMs: 1_001 })).resolves.toMatchObject({ status: 'rejected', reason: 'attenuation_widens' });
  });

  it('lets a child of a parent without a timeout set one', async () => {
    const { ledger, token, scopeOf } = await parent();
    const child = await ledger.attenuate(token, { callTimeoutMs: 5 });
    expect(child.status === 'issued' && scopeOf(child.grantId).callTimeoutMs).toBe(5);
  });

  it('refuses a malformed child timeout (attenuation_invalid)', async () => {
    const { ledger, token } = await parent(1_000);
    for (const bad of [0, 2.5, -3, '9']) {
      await expect(ledger.attenuate(token, { callTimeoutMs: bad as number })).resolves.toMatchObject({ status: 'rejected', reason: 'attenuation_invalid' });
    }
  });

  it('flags a logged child whose timeout was dropped (the re-decided child inherits its parent one)', async () => {
    const { ledger, token } = await parent(1_000);
    await ledger.attenuate(token, { callTimeoutMs: 300 });
    const events = ledger.events();
    const forged = resealedWith(events, (e) => (e.type === 'grant.issued' && e.parentGrantId !== undefined ? { ...e, scope: { ...e.scope, callTimeoutMs: undefined } } : e));
    expect(verify(forged).problems).toEqual([expect.objectContaining({ code: 'decision' })]);
  });

  it("uses the least timeout along the chain for a child's call deadline", async () => {
    const { ledger, token } = await parent();
    const child = await ledger.attenuate(token, { callTimeoutMs: 700 });
    if (child.status !== 'issued') throw new Error('child refused');
    const grandchild = await ledger.attenuate(child.token, { callTimeoutMs: 300 });
    if (grandchild.status !== 'issued') throw new Error('grandchild refused');
    const at = ledger.events().at(-1)?.at as number;
    await ledger.invoke(grandchild.token, 'slow', {});
    const admitted = ledger.events().find((e) => e.type === 'call.admitted') as EventOf<'call.admitted'>;
    expect(admitted.deadline).toBe(at + 300);
  });
});

/** The log with `edit` applied to each event (a JSON copy: undefined fields dropped), re-sealed so that only the decision check can object. */
function resealedWith(events: readonly LedgerEvent[], edit: (e: LedgerEvent) => LedgerEvent): LedgerEvent[] {
  return reseal(events.map((e) => JSON.parse(JSON.stringify(edit(e))) as LedgerEvent));
}

describe('call timeouts: the ledger', () => {
  it('fails a call still running at its deadline with a TimeoutError, aborts its signal and logs timedOut', async () => {
    const { ledger, clock, timers, tool, token } = await timedLedger();
    const pending = ledger.invoke(token, 'slow', {});
    await settle();
    expect(timers.delays).toEqual([1_000]);
    clock.advance(1_000);
    timers.fire();
    const outcome = await pending;
    expect(outcome.status).toBe('failed');
    const error = (outcome as { error: unknown }).error as DOMException;
    expect(error.name).toBe('TimeoutError');
    expect(tool.signals[0]?.aborted).toBe(true);
    expect((tool.signals[0]?.reason as DOMException).name).toBe('TimeoutError');
    expect(settlements(ledger.events())).toEqual([expect.objectContaining({ type: 'call.failed', timedOut: true, refunded: { calls: 0, inputBytes: 0 }, callId: outcome.callId })]);
    expect(ledger.inFlight()).toEqual([]);
  });

  it('ignores the result a timed-out tool returns later: nothing more is logged', async () => {
    const { ledger, clock, timers, tool, token } = await timedLedger();
    const pending = ledger.invoke(token, 'slow', {});
    await settle();
    clock.advance(1_500);
    timers.fire();
    await pending;
    const logged = ledger.events().length;
    tool.release('too late');
    await settle();
    await ledger.close();
    expect(ledger.events()).toHaveLength(logged);
    expect(verify(ledger.events()).ok).toBe(true);
    expect(replay(ledger.events())).toEqual(ledger.state());
  });

  it('refunds a timed-out call when onToolError is refund', async () => {
    const { ledger, clock, timers, token, grantId } = await timedLedger({ onToolError: 'refund' });
    const pending = ledger.invoke(token, 'slow', {});
    await settle();
    expect(ledger.usage(grantId).calls.used).toBe(1);
    clock.advance(1_000);
    timers.fire();
    await pending;
    expect(ledger.usage(grantId)).toEqual({ calls: { limit: 5, used: 0 }, inputBytes: { limit: 1_000, used: 0 } });
    expect(verify(ledger.events()).ok).toBe(true);
  });

  it('waits again when its timer fires before the clock reaches the deadline', async () => {
    const { ledger, clock, timers, tool, token } = await timedLedger();
    const pending = ledger.invoke(token, 'slow', {});
    await settle();
    clock.advance(400);
    timers.fire();
    await settle();
    expect(settlements(ledger.events())).toEqual([]);
    expect(timers.delays.at(-1)).toBe(600);
    tool.release('in time');
    await expect(pending).resolves.toMatchObject({ status: 'completed', value: 'in time' });
    expect(timers.pending()).toBe(0);
  });

  it('treats a result that comes only once the deadline has passed as the timeout (before the timer fires)', async () => {
    const { ledger, clock, tool, token } = await timedLedger();
    const pending = ledger.invoke(token, 'slow', {});
    await settle();
    clock.advance(1_000);
    tool.release('late');
    const outcome = await pending;
    expect(outcome.status).toBe('failed');
    expect(((outcome as { error: unknown }).error as Error).name).toBe('TimeoutError');
    expect(settlements(ledger.events())).toEqual([expect.objectContaining({ timedOut: true })]);
  });

  it('runDueTimeouts settles every due call and says how many', async () => {
    const { ledger, clock, token } = await timedLedger();
    const calls = [ledger.invoke(token, 'slow', {}), ledger.invoke(token, 'slow', {})];
    await settle();
    clock.advance(999);
    await expect(ledger.runDueTimeouts()).resolves.toBe(0);
    clock.advance(1);
    await expect(ledger.runDueTimeouts()).resolves.toBe(2);
    for (const outcome of await Promise.all(calls)) expect(outcome.status).toBe('failed');
    await expect(ledger.runDueTimeouts()).resolves.toBe(0);
  });

  it('still aborts a timed call on revocation with abortInFlight (the revocation reason, no timeout)', async () => {
    const { ledger, tool, token, grantId } = await timedLedger();
    const pending = ledger.invoke(token, 'slow', {});
    await settle();
    await ledger.revoke(grantId, { abortInFlight: true });
    expect(tool.signals[0]?.aborted).toBe(true);
    expect((tool.signals[0]?.reason as Error).name).not.toBe('TimeoutError');
    tool.release('stopped');
    await expect(pending).resolves.toMatchObject({ status: 'completed' });
    expect(settlements(ledger.events())[0]).not.toHaveProperty('timedOut');
  });
});

describe('call timeouts: verify', () => {
  async function timedOutLog(): Promise<readonly LedgerEvent[]> {
    const { ledger, clock, timers, token } = await timedLedger();
    const pending = ledger.invoke(token, 'slow', {});
    await settle();
    clock.advance(2_000);
    timers.fire();
    await pending;
    return ledger.events();
  }

  it('accepts a timeout logged at or after the deadline', async () => {
    expect(verify(await timedOutLog())).toMatchObject({ ok: true });
  });

  it('flags a timedOut failure dated before the deadline as a forgery', async () => {
    const events = await timedOutLog();
    const deadline = (events.find((e) => e.type === 'call.admitted') as EventOf<'call.admitted'>).deadline as number;
    const forged = resealedWith(events, (e) => (e.type === 'call.failed' ? { ...e, at: deadline - 1 } : e));
    expect(verify(forged).problems).toEqual([expect.objectContaining({ code: 'decision', message: expect.stringContaining('call_not_due') })]);
  });

  it('flags an admission whose deadline was moved', async () => {
    const events = await timedOutLog();
    const forged = resealedWith(events, (e) => (e.type === 'call.admitted' ? { ...e, deadline: (e.deadline as number) + 10_000 } : e));
    expect(verify(forged).ok).toBe(false);
  });

  it('flags a timeout logged for a call of a grant without a timeout', async () => {
    const events = await timedOutLog();
    const forged = resealedWith(events, (e) => {
      if (e.type === 'grant.issued') return { ...e, scope: { ...e.scope, callTimeoutMs: undefined } };
      if (e.type === 'call.admitted') return { ...e, deadline: undefined };
      return e;
    });
    expect(verify(forged).problems).toEqual([expect.objectContaining({ code: 'decision', message: expect.stringContaining('call_not_due') })]);
  });

  it('refuses a malformed timeout field in the shape check', async () => {
    const events = await timedOutLog();
    const forged = resealedWith(events, (e) => (e.type === 'call.failed' ? ({ ...e, timedOut: false } as unknown as LedgerEvent) : e));
    expect(verify(forged).problems[0]).toMatchObject({ code: 'malformed' });
  });
});

describe('call timeouts: a reopened ledger', () => {
  const tmp = sqliteTempDir();
  afterAll(() => tmp.cleanup());

  it('times out on open (SQLite) what a crashed process left open, once the deadline has passed', async () => {
    const path = tmp.file('crash.sqlite');
    const first = await timedLedger({ store: sqliteStore({ path }) });
    void first.ledger.invoke(first.token, 'slow', {});
    await settle();
    // "Crash": the first ledger is abandoned without close; a second process opens the file later.
    const clock = manualClock(first.clock.now());
    const timers = manualTimers();
    const second = createLedger({ store: sqliteStore({ path }), clock: clock.now, setTimer: timers.setTimer, onToolError: 'refund' });
    expect(second.inFlight()).toHaveLength(1);
    expect(timers.delays).toEqual([1_000]);
    clock.advance(1_000);
    timers.fire();
    await settle();
    expect(second.inFlight()).toEqual([]);
    expect(settlements(second.events())).toEqual([expect.objectContaining({ type: 'call.failed', timedOut: true, refunded: { calls: 1, inputBytes: 2 } })]);
    expect(second.usage(first.grantId).calls.used).toBe(0);
    expect(verify(second.events()).ok).toBe(true);
    await second.close();
  });

  it('times out on openLedger (an asynchronous store) a call whose deadline already passed', async () => {
    const store = new AsyncMemoryStore();
    const clock = manualClock();
    const first = await openLedger({ store, clock: clock.now, setTimer: manualTimers().setTimer });
    await first.registerTool({ name: 'slow', inputSchema: { type: 'object' }, run: () => new Promise(() => undefined) });
    const { token } = await first.issue({ tools: ['slow'], expiresAt: clock.now() + hour, budget: { calls: 5, inputBytes: 1_000 }, callTimeoutMs: 50 });
    void first.invoke(token, 'slow', {});
    await settle();
    clock.advance(60);
    const timers = manualTimers();
    const second = await openLedger({ store, clock: clock.now, setTimer: timers.setTimer });
    expect(timers.delays).toEqual([0]);
    timers.fire();
    await settle();
    await second.close();
    expect(settlements(store.log)).toEqual([expect.objectContaining({ timedOut: true })]);
    expect(verify(store.log).ok).toBe(true);
  });

  it('lets a settlement decided before the deadline win over the timeout while the store refuses it', async () => {
    const inner = memoryStore();
    let down = false;
    const store: EventStore = { load: () => inner.load(), append: (events) => (down ? (() => { throw new Error('down'); })() : inner.append(events)) };
    const { ledger, clock, timers, tool, token } = await timedLedger({ store });
    const pending = ledger.invoke(token, 'slow', {});
    await settle();
    down = true;
    tool.release('done in time');
    await settle();
    clock.advance(5_000);
    timers.fire(); // the call's deadline timer and the settlement's retry timer (setTimeout, real) race here
    await settle();
    expect(ledger.inFlight()).toHaveLength(1);
    down = false;
    await expect(pending).resolves.toMatchObject({ status: 'completed', value: 'done in time' });
    expect(settlements(ledger.events())).toEqual([expect.objectContaining({ type: 'call.completed' })]);
    expect(verify(ledger.events()).ok).toBe(true);
  });

  it('lets a journalled settlement win over the timeout on the next open, even past the deadline', async () => {
    const inner = memoryStore();
    let down = false;
    const store: EventStore = { load: () => inner.load(), append: (events) => (down ? (() => { throw new Error('down'); })() : inner.append(events)) };
    const first = await timedLedger({ store });
    const pending = first.ledger.invoke(first.token, 'slow', {});
    await settle();
    down = true;
    first.tool.release('done in time');
    await settle();
    await first.ledger.close();
    await expect(pending).resolves.toMatchObject({ status: 'completed' });
    down = false;
    const clock = manualClock(first.clock.now() + 10_000);
    const timers = manualTimers();
    const second = createLedger({ store, clock: clock.now, setTimer: timers.setTimer });
    await second.registerTool({ name: 'slow', inputSchema: { type: 'object' }, run: () => 'x' }); // queued after the kept settlement
    timers.fire();
    await settle();
    expect(settlements(second.events())).toEqual([expect.objectContaining({ type: 'call.completed' })]);
    await expect(second.runDueTimeouts()).resolves.toBe(0);
    expect(verify(second.events()).ok).toBe(true);
  });

  it('keeps deadlines through a SQLite snapshot', async () => {
    const path = tmp.file('snapshot.sqlite');
    const first = await timedLedger({ store: sqliteStore({ path, snapshotEvery: 1 }) });
    void first.ledger.invoke(first.token, 'slow', {});
    await settle();
    const reopened = createLedger({ store: sqliteStore({ path }), clock: first.clock.now, setTimer: manualTimers().setTimer });
    expect(reopened.inFlight()[0]?.deadline).toBe(first.clock.now() + 1_000);
    expect(reopened.state()).toEqual(replay(reopened.events()));
    await reopened.close();
  });
});

describe('call timeouts: issue', () => {
  it('refuses a callTimeoutMs that is not a positive safe integer, naming the field', async () => {
    const ledger: Ledger = createLedger({ clock: manualClock().now });
    await ledger.registerTool({ name: 'slow', inputSchema: { type: 'object' }, run: () => 'x' });
    await expect(ledger.issue({ tools: ['slow'], expiresAt: manualClock().now() + hour, budget: { calls: 1, inputBytes: 10 }, callTimeoutMs: 0 })).rejects.toThrow(/callTimeoutMs/);
  });
});

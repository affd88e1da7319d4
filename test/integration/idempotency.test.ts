import { createLedger, decide, evolve, evolveBatch, limits, memoryStore, replay, sealEvent, sha256Hex, sqliteStore, verify, type Command, type EventOf, type LedgerEvent, type LedgerState } from '../../src';
import { shardGet, shardValues } from '../../src/domain/shardedMap';
import { given, issueCommand, payloads, registerNotes, T0 } from '../support/given';
import { manualClock } from '../support/fixtures';
import { sqliteTempDir } from '../support/sqliteFiles';
import { reseal } from '../support/sealedLog';
import Database from 'better-sqlite3';
import { isByGrant, keyContainersCurrent, keyStatus } from '../../src/domain/idempotency';
import { writeSnapshot } from '../../src/stores/sqlite/sqliteSnapshots';

const hex = (c: string): string => c.repeat(64);
const keyed = (keyDigest: string, argsDigest: string, expiresAt = T0 + 10_000, keysMax: number = limits.idempotencyKeysPerTreeMax) => ({ keyDigest, argsDigest, expiresAt, keysMax });

function admitKeyed(callId: string, at: number, idempotency: ReturnType<typeof keyed> | undefined, overrides: Partial<Extract<Command, { type: 'admit' }>> = {}): Command {
  return { type: 'admit', at, callId, grantId: 'g1', tool: 'notes.write', inputBytes: 10, argumentCheck: 'ok', resourceCheck: 'ok', ...(idempotency ? { idempotency } : {}), ...overrides };
}

/** Folds commands one by one (like `given`), returning the state and the sealed log. */
function run(commands: readonly Command[], start: { state: LedgerState; events: LedgerEvent[] }): { state: LedgerState; events: LedgerEvent[] } {
  let { state } = start;
  const events = [...start.events];
  for (const command of commands) {
    const decision = decide(state, command);
    if (!decision.ok) throw new Error(`refused: ${decision.message}`);
    for (const payload of decision.events) {
      const event = sealEvent(payload, command.at, state.head);
      state = evolve(state, event);
      events.push(event);
    }
  }
  return { state, events };
}

describe('idempotent retries: the decider', () => {
  const base = () => given(registerNotes, issueCommand({ budget: { calls: 3, inputBytes: 1_000 } }));

  it('binds a key on admission, logging only digests and the expiry', () => {
    const g = base();
    expect(payloads(g.when(admitKeyed('c1', T0 + 1, keyed(hex('a'), hex('b')))))).toEqual([
      expect.objectContaining({ type: 'call.admitted', callId: 'c1', idempotency: { keyDigest: hex('a'), argsDigest: hex('b'), expiresAt: T0 + 10_000 } }),
    ]);
  });

  it('answers a retry with the same key and arguments as a replay of the first call, reserving nothing', () => {
    const g = run([admitKeyed('c1', T0 + 1, keyed(hex('a'), hex('b')))], base());
    const decision = decide(g.state, admitKeyed('c2', T0 + 2, keyed(hex('a'), hex('b'))));
    expect(payloads(decision)).toEqual([
      { type: 'call.replayed', callId: 'c2', grantId: 'g1', tool: 'notes.write', replayOf: 'c1', idempotency: { keyDigest: hex('a'), argsDigest: hex('b') } },
    ]);
    const after = run([admitKeyed('c2', T0 + 2, keyed(hex('a'), hex('b')))], g).state;
    expect(after.grants).toEqual(g.state.grants);
    expect(after.inFlight).toEqual(g.state.inFlight);
  });

  it('replays even when the budget is spent (a replay is answered before any budget check)', () => {
    const g = run([admitKeyed('c1', T0 + 1, keyed(hex('a'), hex('b'))), admitKeyed('c2', T0 + 1, undefined), admitKeyed('c3', T0 + 1, undefined)], base());
    expect(payloads(decide(g.state, admitKeyed('c4', T0 + 2, undefined)))[0]).toMatchObject({ type: 'call.rejected', reason: 'call_budget_exhausted' });
    expect(payloads(decide(g.state, admitKeyed('c5', T0 + 2, keyed(hex('a'), hex('b')))))[0]).toMatchObject({ type: 'call.replayed', replayOf: 'c1' });
  });

  it('refuses the same key with other arguments or another tool as idempotency_conflict, with the digests', () => {
    const g = run([admitKeyed('c1', T0 + 1, keyed(hex('a'), hex('b')))], base());
    expect(payloads(decide(g.state, admitKeyed('c2', T0 + 2, keyed(hex('a'), hex('c')))))).toEqual([
      { type: 'call.rejected', callId: 'c2', grantId: 'g1', tool: 'notes.write', reason: 'idempotency_conflict', inputBytes: 10, idempotency: { keyDigest: hex('a'), argsDigest: hex('c') } },
    ]);
  });

  it('puts authority, argument and resource refusals before the key check', () => {
    const g = run([admitKeyed('c1', T0 + 1, keyed(hex('a'), hex('b')))], base());
    expect(payloads(decide(g.state, admitKeyed('c2', T0 + 2, keyed(hex('a'), hex('b')), { resourceCheck: 'resource_not_permitted' })))[0]).toMatchObject({ reason: 'resource_not_permitted' });
    expect(payloads(decide(g.state, admitKeyed('c3', T0 + 60_000, keyed(hex('a'), hex('b')))))[0]).toMatchObject({ reason: 'expired' });
  });

  it('binds only on admission: a refused keyed call leaves the key free', () => {
    const g = run([admitKeyed('c1', T0 + 1, keyed(hex('a'), hex('b')), { resourceCheck: 'resource_not_permitted' })], base());
    expect(payloads(decide(g.state, admitKeyed('c2', T0 + 2, keyed(hex('a'), hex('b')))))[0]).toMatchObject({ type: 'call.admitted' });
  });

  it('forgets a key at its expiry: the same key then binds a new call', () => {
    const g = run([admitKeyed('c1', T0 + 1, keyed(hex('a'), hex('b'), T0 + 100))], base());
    expect(payloads(decide(g.state, admitKeyed('c2', T0 + 99, keyed(hex('a'), hex('b')))))[0]).toMatchObject({ type: 'call.replayed' });
    expect(payloads(decide(g.state, admitKeyed('c3', T0 + 100, keyed(hex('a'), hex('c')))))[0]).toMatchObject({ type: 'call.admitted' });
  });

  it('keeps keys per grant: the same key on another grant is another binding', () => {
    const g = run([issueCommand({ budget: { calls: 3, inputBytes: 1_000 } }, 'g2'), admitKeyed('c1', T0 + 1, keyed(hex('a'), hex('b')))], base());
    expect(payloads(decide(g.state, admitKeyed('c2', T0 + 2, keyed(hex('a'), hex('b')), { grantId: 'g2' })))[0]).toMatchObject({ type: 'call.admitted' });
  });

  it("records how the first call ended on its binding (what a retry after a restart reports)", () => {
    const g = run([admitKeyed('c1', T0 + 1, keyed(hex('a'), hex('b'))), { type: 'settle', at: T0 + 2, callId: 'c1', outcome: 'failed', refund: false }], base());
    expect(Array.from(shardBindings(g.state))).toEqual([expect.objectContaining({ callId: 'c1', status: 'failed' })]);
  });

  it('settles a completed keyed call without touching the bindings (its status follows from leaving inFlight), in both folds', () => {
    const g = run([admitKeyed('c1', T0 + 1, keyed(hex('a'), hex('b')))], base());
    expect(shardBindings(g.state)).toEqual([expect.objectContaining({ callId: 'c1', status: 'in_flight' })]);
    const done = run([{ type: 'settle', at: T0 + 2, callId: 'c1', outcome: 'completed', refund: false }], g);
    expect(done.state.idempotencyBindings).toBe(g.state.idempotencyBindings);
    expect(evolveBatch(g.state, done.events.slice(-1)).idempotencyBindings).toBe(g.state.idempotencyBindings);
    expect(shardBindings(done.state)).toEqual([expect.objectContaining({ callId: 'c1', status: 'completed' })]);
  });

  it('keeps one digest bound on several grants apart: a failure, an eviction and a re-binding each touch only their own grant', () => {
    const g2 = issueCommand({ budget: { calls: 9, inputBytes: 1_000 } }, 'g2');
    const start = run([g2], base());
    const bound = run([admitKeyed('c1', T0 + 1, keyed(hex('a'), hex('b'), T0 + 50)), admitKeyed('c2', T0 + 2, keyed(hex('a'), hex('b'), T0 + 5_000), { grantId: 'g2' })], start);
    const failed = run([{ type: 'settle', at: T0 + 3, callId: 'c2', outcome: 'failed', refund: false }], bound);
    expect(shardBindings(failed.state).sort((x, y) => x.callId.localeCompare(y.callId))).toEqual([
      { callId: 'c1', grantId: 'g1', status: 'in_flight' },
      { callId: 'c2', grantId: 'g2', status: 'failed' },
    ]);
    // g1's binding expires; g1's next keyed call evicts it, g2's stays; then g1 binds the digest anew.
    const later = run([admitKeyed('c3', T0 + 60, keyed(hex('c'), hex('b'))), admitKeyed('c4', T0 + 61, keyed(hex('a'), hex('d')))], failed);
    expect(shardBindings(later.state).filter((b) => b.callId !== 'c3').sort((x, y) => x.callId.localeCompare(y.callId))).toEqual([
      { callId: 'c2', grantId: 'g2', status: 'failed' },
      { callId: 'c4', grantId: 'g1', status: 'in_flight' },
    ]);
    expect(payloads(decide(later.state, admitKeyed('c5', T0 + 62, keyed(hex('a'), hex('b')), { grantId: 'g2' })))[0]).toMatchObject({ type: 'call.replayed', replayOf: 'c2' });
    expect(payloads(decide(later.state, admitKeyed('c6', T0 + 62, keyed(hex('a'), hex('d')))))[0]).toMatchObject({ type: 'call.replayed', replayOf: 'c4' });
    expect(replay(later.events)).toEqual(later.state);
    expect(evolveBatch(start.state, later.events.slice(start.events.length))).toEqual(later.state);
    expect(JSON.parse(JSON.stringify(later.state))).toEqual(later.state);
    expect(verify(later.events)).toMatchObject({ ok: true });
  });

  it('keeps one digest bound on many grants as a map by grant: each retry finds its own call, and expiry evicts them one by one', () => {
    const start = given(registerNotes, issueCommand({ budget: { calls: 1_000, inputBytes: 100_000 } }));
    const children = Array.from({ length: 40 }, (_, i) => `child${i}`);
    const tree = run(children.map((grantId) => ({ type: 'attenuate', at: T0 + 1, parentGrantId: 'g1', grantId, tokenDigest: sha256Hex(grantId), request: { kind: 'narrowing', narrowing: {} } }) as Command).concat(
      children.map((grantId, i) => admitKeyed(`k${i}`, T0 + 2 + i, keyed(hex('a'), hex('b'), T0 + 100 + i), { grantId })),
    ), start);
    const bound = shardGet(tree.state.idempotencyBindings, hex('a'), 2);
    expect(bound !== undefined && isByGrant(bound) ? bound.count : bound).toBe(40);
    children.forEach((grantId, i) => expect(payloads(decide(tree.state, admitKeyed(`r${i}`, T0 + 50, keyed(hex('a'), hex('b')), { grantId })))[0]).toMatchObject({ type: 'call.replayed', replayOf: `k${i}` }));
    // At T0 + 120 the first 21 have expired: the next keyed call in the tree evicts them.
    const later = run([admitKeyed('fresh', T0 + 120, keyed(hex('c'), hex('b')))], tree);
    const left = shardGet(later.state.idempotencyBindings, hex('a'), 2);
    expect(left !== undefined && isByGrant(left) ? left.count : left).toBe(19);
    expect(shardBindings(later.state).filter((b) => b.callId.startsWith('k')).map((b) => b.callId).sort()).toEqual(children.slice(21).map((_, i) => `k${i + 21}`).sort());
    expect(replay(later.events)).toEqual(later.state);
    expect(evolveBatch(start.state, later.events.slice(start.events.length))).toEqual(later.state);
    expect(JSON.parse(JSON.stringify(later.state))).toEqual(later.state);
  });

  it("keeps each tree's key queue on its root's record: a child's keyed call queues on the root", () => {
    const tree = run([{ type: 'attenuate', at: T0 + 1, parentGrantId: 'g1', grantId: 'child', tokenDigest: hex('9'), request: { kind: 'narrowing', narrowing: {} } }], base());
    const g = run([admitKeyed('c1', T0 + 2, keyed(hex('a'), hex('b')), { grantId: 'child' }), admitKeyed('c2', T0 + 3, keyed(hex('c'), hex('b')))], tree);
    expect(shardGet(g.state.grants, 'g1')?.keyQueue).toMatchObject({ first: 0, next: 2 });
    expect(shardGet(g.state.grants, 'child')?.keyQueue).toBeUndefined();
    expect(replay(g.events)).toEqual(g.state);
  });

  describe('the bound on live keys per delegation tree', () => {
    const bound = limits.idempotencyKeysPerTreeMax;
    const full = (() => {
      let g = run([issueCommand({ budget: { calls: bound + 10, inputBytes: 1_000_000 } }, 'g1')], { ...given(registerNotes) });
      const commands: Command[] = [];
      for (let i = 0; i < bound; i++) commands.push(admitKeyed(`c${i}`, T0 + 1 + (i < 2 ? 0 : 1), keyed(sha256Hex(`k${i}`), hex('b'), i < 2 ? T0 + 50 : T0 + 50_000)));
      g = run(commands, g);
      return g;
    })();

    it(`refuses a new keyed call once ${bound} unexpired keys are bound (idempotency_keys_exhausted), never forgetting a live one`, () => {
      expect(payloads(decide(full.state, admitKeyed('new', T0 + 10, keyed(hex('e'), hex('b')))))[0]).toMatchObject({ type: 'call.rejected', reason: 'idempotency_keys_exhausted', keysMax: bound });
      // a call without a key, and a retry of a bound key, are still answered
      expect(payloads(decide(full.state, admitKeyed('plain', T0 + 10, undefined)))[0]).toMatchObject({ type: 'call.admitted' });
      expect(payloads(decide(full.state, admitKeyed('retry', T0 + 10, keyed(sha256Hex('k0'), hex('b')))))[0]).toMatchObject({ type: 'call.replayed', replayOf: 'c0' });
    });

    it('evicts expired keys, oldest first, when the tree binds a new one', () => {
      const after = run([admitKeyed('new', T0 + 50, keyed(hex('e'), hex('b')))], full);
      expect(after.events.at(-1)).toMatchObject({ type: 'call.admitted', callId: 'new' });
      const bindings = Array.from(shardBindings(after.state));
      expect(bindings).toHaveLength(bound - 1);
      expect(bindings.some((b) => b.callId === 'c0' || b.callId === 'c1')).toBe(false);
      expect(replay(after.events)).toEqual(after.state);
      expect(verify(after.events)).toMatchObject({ ok: true });
    });

    it("counts a child's keys against its root", () => {
      const tree = run([{ type: 'attenuate', at: T0 + 20, parentGrantId: 'g1', grantId: 'child', tokenDigest: hex('9'), request: { kind: 'narrowing', narrowing: { budget: { calls: 5 } } } }], full);
      expect(payloads(decide(tree.state, admitKeyed('childCall', T0 + 21, keyed(hex('e'), hex('b')), { grantId: 'child' })))[0]).toMatchObject({ reason: 'idempotency_keys_exhausted' });
    });
  });
});

/** The state's bindings (every grant's, also where several grants bound one digest), each with its call's status (idempotency.ts, keyStatus). */
function shardBindings(state: LedgerState): { callId: string; grantId: string; status: string }[] {
  const all: { callId: string; grantId: string; status: string }[] = [];
  for (const bound of shardValues(state.idempotencyBindings)) {
    for (const b of isByGrant(bound) ? shardValues(bound.byGrant) : [bound]) all.push({ callId: b.callId, grantId: b.grantId, status: keyStatus(state, b) });
  }
  return all;
}

/** The log with `edit` applied to each event (a JSON copy: undefined fields dropped), re-sealed so that only the decision check can object. */
function resealedWith(events: readonly LedgerEvent[], edit: (e: LedgerEvent) => LedgerEvent): LedgerEvent[] {
  return reseal(events.map((e) => JSON.parse(JSON.stringify(edit(e))) as LedgerEvent));
}

const hour = 3_600_000;

async function keyedLedger(options: { store?: ReturnType<typeof memoryStore>; idempotencyTtlMs?: number; clock?: ReturnType<typeof manualClock> } = {}) {
  const clock = options.clock ?? manualClock();
  const ledger = createLedger({ clock: clock.now, ...(options.store ? { store: options.store } : {}), ...(options.idempotencyTtlMs ? { idempotencyTtlMs: options.idempotencyTtlMs } : {}) });
  const runs: unknown[] = [];
  let gate: Promise<void> = Promise.resolve();
  await ledger.registerTool({
    name: 'pay',
    inputSchema: { type: 'object', properties: { amount: { type: 'integer' }, to: { type: 'string' } } },
    run: async (args) => {
      runs.push(args);
      await gate;
      return { paid: args.amount, n: runs.length };
    },
  });
  const { grantId, token } = await ledger.issue({ tools: ['pay'], expiresAt: clock.now() + 48 * hour, budget: { calls: 10, inputBytes: 10_000 } });
  return { ledger, clock, runs, grantId, token, hold: () => { let release = () => undefined as void; gate = new Promise<void>((r) => (release = r)); return () => release(); } };
}

/** A SQLite ledger at `path` that snapshots every event, after one keyed call; closed. */
async function keyedCallSnapshotted(path: string, now: () => number): Promise<{ token: string; call: { callId: string } }> {
  const first = createLedger({ store: sqliteStore({ path, snapshotEvery: 1 }), clock: now });
  await first.registerTool({ name: 'pay', inputSchema: { type: 'object' }, run: () => 'ok' });
  const { token } = await first.issue({ tools: ['pay'], expiresAt: now() + hour, budget: { calls: 5, inputBytes: 1_000 } });
  const call = await first.invoke(token, 'pay', {}, { idempotencyKey: 'k' });
  await first.close();
  return { token, call };
}

/** Reopens the ledger at `path` (its state must equal a replay of its log) and retries the keyed call; closed after. */
async function retryReopened(path: string, now: () => number, token: string): Promise<unknown> {
  const reopened = createLedger({ store: sqliteStore({ path }), clock: now });
  expect(reopened.state()).toEqual(replay(reopened.events()));
  await reopened.registerTool({ name: 'pay', inputSchema: { type: 'object' }, run: () => 'again' });
  const outcome = await reopened.invoke(token, 'pay', {}, { idempotencyKey: 'k' });
  await reopened.close();
  return outcome;
}

/** In a temporary SQLite file (removed after): one keyed call snapshotted there, then `fn` with what a retry needs. */
async function withKeyedSnapshot(file: string, fn: (path: string, now: () => number, first: { token: string; call: { callId: string } }) => Promise<void>): Promise<void> {
  const tmp = sqliteTempDir();
  try {
    const path = tmp.file(file);
    const clock = manualClock();
    await fn(path, clock.now, await keyedCallSnapshotted(path, clock.now));
  } finally {
    tmp.cleanup();
  }
}

describe('idempotent retries: the ledger', () => {
  it('returns the first outcome, with its callId and replayed: true, running the tool once and reserving once', async () => {
    const { ledger, runs, grantId, token } = await keyedLedger();
    const first = await ledger.invoke(token, 'pay', { amount: 5, to: 'bob' }, { idempotencyKey: 'order-17' });
    const retry = await ledger.invoke(token, 'pay', { to: 'bob', amount: 5 }, { idempotencyKey: 'order-17' });
    expect(first).toMatchObject({ status: 'completed', value: { paid: 5, n: 1 } });
    expect(first).not.toHaveProperty('replayed');
    expect(retry).toEqual({ ...first, replayed: true });
    expect(runs).toHaveLength(1);
    expect(ledger.usage(grantId).calls.used).toBe(1);
    expect(ledger.events().filter((e) => e.type === 'call.replayed')).toEqual([expect.objectContaining({ replayOf: first.callId, grantId })]);
    expect(verify(ledger.events())).toMatchObject({ ok: true });
    expect(replay(ledger.events())).toEqual(ledger.state());
  });

  it('waits for the first call while it runs, then answers the retry with its outcome', async () => {
    const { ledger, runs, token, hold } = await keyedLedger();
    const release = hold();
    const first = ledger.invoke(token, 'pay', { amount: 1 }, { idempotencyKey: 'k' });
    const retry = ledger.invoke(token, 'pay', { amount: 1 }, { idempotencyKey: 'k' });
    let retried = false;
    void retry.then(() => (retried = true));
    for (let i = 0; i < 20; i++) await Promise.resolve();
    expect(retried).toBe(false);
    release();
    const [a, b] = await Promise.all([first, retry]);
    expect(b).toEqual({ ...a, replayed: true });
    expect(runs).toHaveLength(1);
  });

  it('refuses the same key with other arguments as idempotency_conflict, never running the tool', async () => {
    const { ledger, runs, token } = await keyedLedger();
    await ledger.invoke(token, 'pay', { amount: 1 }, { idempotencyKey: 'k' });
    await expect(ledger.invoke(token, 'pay', { amount: 2 }, { idempotencyKey: 'k' })).resolves.toMatchObject({ status: 'rejected', reason: 'idempotency_conflict' });
    expect(runs).toHaveLength(1);
  });

  it.each([
    ['an empty key', ''],
    ['a key over 255 characters', 'k'.repeat(256)],
    ['a key that is not a string', 42],
    ['a key with a lone surrogate', 'k\uD800'],
  ])('refuses %s as invalid_arguments (logged, nothing runs)', async (_what, key) => {
    const { ledger, runs, token } = await keyedLedger();
    await expect(ledger.invoke(token, 'pay', { amount: 1 }, { idempotencyKey: key as string })).resolves.toMatchObject({ status: 'rejected', reason: 'invalid_arguments' });
    expect(runs).toHaveLength(0);
    expect(ledger.events().at(-1)).toMatchObject({ type: 'call.rejected', reason: 'invalid_arguments' });
  });

  it.each([
    ['a throwing idempotencyKey getter', () => Object.defineProperty({}, 'idempotencyKey', { get: () => { throw new Error('boom'); } })],
    ['a throwing signal getter', () => Object.defineProperty({ idempotencyKey: 'k' }, 'signal', { get: () => { throw new Error('boom'); } })],
    ['a Proxy whose get trap throws', () => new Proxy({}, { get: () => { throw new Error('boom'); } })],
    ['a signal that is not an AbortSignal', () => ({ idempotencyKey: 'k', signal: { aborted: false, addEventListener: () => { throw new Error('boom'); } } })],
    ['a signal that is a Proxy whose traps throw', () => ({ signal: new Proxy({}, { getPrototypeOf: () => { throw new Error('boom'); } }) })],
    ['a signal made from AbortSignal.prototype (no brand)', () => ({ signal: Object.create(AbortSignal.prototype, { addEventListener: { value: () => { throw new Error('boom'); } } }) })],
    ['a real signal wrapped in a Proxy', () => ({ signal: new Proxy(new AbortController().signal, {}) })],
  ])('refuses options with %s as invalid_arguments, never throwing (logged, nothing runs)', async (_what, options) => {
    const { ledger, runs, token } = await keyedLedger();
    await expect(ledger.invoke(token, 'pay', { amount: 1 }, options() as { idempotencyKey: string })).resolves.toMatchObject({ status: 'rejected', reason: 'invalid_arguments' });
    expect(runs).toHaveLength(0);
    expect(ledger.events().at(-1)).toMatchObject({ type: 'call.rejected', reason: 'invalid_arguments' });
    expect(ledger.events().at(-1)).not.toHaveProperty('idempotency');
    expect(verify(ledger.events())).toMatchObject({ ok: true });
  });

  it('calls none of a real signal\'s own properties: shadowing methods that throw cannot leave the call unsettled', async () => {
    const { ledger, runs, token } = await keyedLedger();
    const controller = new AbortController();
    const boom = { value: () => { throw new Error('boom'); } };
    Object.defineProperties(controller.signal, { addEventListener: boom, removeEventListener: boom, aborted: { get: boom.value }, reason: { get: boom.value } });
    await expect(ledger.invoke(token, 'pay', { amount: 1 }, { signal: controller.signal })).resolves.toMatchObject({ status: 'completed' });
    expect(runs).toHaveLength(1);
    expect(ledger.events().at(-1)).toMatchObject({ type: 'call.completed' });
  });

  it('accepts a key of exactly 255 characters', async () => {
    const { ledger, token } = await keyedLedger();
    await expect(ledger.invoke(token, 'pay', { amount: 1 }, { idempotencyKey: 'k'.repeat(255) })).resolves.toMatchObject({ status: 'completed' });
  });

  it('never logs the key itself, only its SHA-256', async () => {
    const { ledger, token } = await keyedLedger();
    const key = 'secret-looking-key-4f1c';
    await ledger.invoke(token, 'pay', { amount: 1 }, { idempotencyKey: key });
    await ledger.invoke(token, 'pay', { amount: 1 }, { idempotencyKey: key });
    await ledger.invoke(token, 'pay', { amount: 3 }, { idempotencyKey: key });
    const text = JSON.stringify(ledger.events());
    expect(text).not.toContain(key);
    expect((ledger.events().find((e) => e.type === 'call.admitted') as EventOf<'call.admitted'>).idempotency?.keyDigest).toBe(sha256Hex(key));
  });

  it('runs the call again once the key has lived idempotencyTtlMs of log time', async () => {
    const { ledger, clock, runs, token } = await keyedLedger({ idempotencyTtlMs: 1_000 });
    await ledger.invoke(token, 'pay', { amount: 1 }, { idempotencyKey: 'k' });
    clock.advance(999);
    await expect(ledger.invoke(token, 'pay', { amount: 1 }, { idempotencyKey: 'k' })).resolves.toMatchObject({ replayed: true });
    clock.advance(1);
    const again = await ledger.invoke(token, 'pay', { amount: 1 }, { idempotencyKey: 'k' });
    expect(again).toMatchObject({ status: 'completed' });
    expect(again).not.toHaveProperty('replayed');
    expect(runs).toHaveLength(2);
  });

  it('refuses a new key once the tree holds idempotencyKeysPerTreeMax live keys, and the log re-derives it', async () => {
    const clock = manualClock();
    const ledger = createLedger({ clock: clock.now, idempotencyKeysPerTreeMax: 2, idempotencyTtlMs: 1_000 });
    await ledger.registerTool({ name: 'pay', inputSchema: { type: 'object' }, run: () => 'ok' });
    const { token } = await ledger.issue({ tools: ['pay'], expiresAt: clock.now() + hour, budget: { calls: 10, inputBytes: 1_000 } });
    const child = await ledger.attenuate(token, { budget: { calls: 5 } });
    if (child.status !== 'issued') throw new Error('child refused');
    await ledger.invoke(token, 'pay', {}, { idempotencyKey: 'a' });
    await ledger.invoke(child.token, 'pay', {}, { idempotencyKey: 'b' });
    await expect(ledger.invoke(token, 'pay', {}, { idempotencyKey: 'c' })).resolves.toMatchObject({ status: 'rejected', reason: 'idempotency_keys_exhausted' });
    await expect(ledger.invoke(token, 'pay', {})).resolves.toMatchObject({ status: 'completed' });
    await expect(ledger.invoke(token, 'pay', {}, { idempotencyKey: 'a' })).resolves.toMatchObject({ replayed: true });
    clock.advance(1_000);
    await expect(ledger.invoke(token, 'pay', {}, { idempotencyKey: 'c' })).resolves.toMatchObject({ status: 'completed' });
    expect(verify(ledger.events())).toMatchObject({ ok: true });
    const forged = resealedWith(ledger.events(), (e) => (e.type === 'call.rejected' && e.reason === 'idempotency_keys_exhausted' ? { ...e, keysMax: 3 } : e));
    expect(verify(forged).problems).toEqual([expect.objectContaining({ code: 'decision' })]);
  });

  it('refuses an idempotencyKeysPerTreeMax outside 1 to limits.idempotencyKeysPerTreeMax', () => {
    for (const bad of [0, 1.5, limits.idempotencyKeysPerTreeMax + 1]) expect(() => createLedger({ idempotencyKeysPerTreeMax: bad })).toThrow(/idempotencyKeysPerTreeMax/);
  });

  it('refuses an idempotencyTtlMs that is not a positive safe integer', () => {
    for (const bad of [0, -5, 1.5, Number.NaN]) expect(() => createLedger({ idempotencyTtlMs: bad })).toThrow(/idempotencyTtlMs/);
  });

  it('answers a retry after a restart with how the first call ended, without its value', async () => {
    const store = memoryStore();
    const clock = manualClock();
    const { ledger, token } = await keyedLedger({ store, clock });
    const first = await ledger.invoke(token, 'pay', { amount: 1 }, { idempotencyKey: 'k' });
    await ledger.close();
    const reopened = createLedger({ store, clock: clock.now });
    await reopened.registerTool({ name: 'pay', inputSchema: { type: 'object', properties: { amount: { type: 'integer' }, to: { type: 'string' } } }, run: () => { throw new Error('must not run'); } });
    await expect(reopened.invoke(token, 'pay', { amount: 1 }, { idempotencyKey: 'k' })).resolves.toEqual({ status: 'replayed', callId: first.callId, replayed: true, settled: 'completed' });
    expect(verify(reopened.events())).toMatchObject({ ok: true });
  });

  it(`holds the values of the last ${limits.idempotentOutcomesHeldMax} keyed calls: an older retry gets how its call ended, without the value`, async () => {
    const held = limits.idempotentOutcomesHeldMax;
    const clock = manualClock();
    const ledger = createLedger({ clock: clock.now });
    await ledger.registerTool({ name: 'pay', inputSchema: { type: 'object', properties: { n: { type: 'integer' } } }, run: (args) => ({ n: args.n }) });
    // Two trees, since each binds at most limits.idempotencyKeysPerTreeMax live keys.
    const grant = () => ledger.issue({ tools: ['pay'], expiresAt: clock.now() + hour, budget: { calls: held, inputBytes: 10_000_000 } });
    const a = await grant();
    const b = await grant();
    const first = await ledger.invoke(a.token, 'pay', { n: -1 }, { idempotencyKey: 'first' });
    for (let i = 0; i < held; i++) await ledger.invoke(b.token, 'pay', { n: i }, { idempotencyKey: `k${i}` });
    await expect(ledger.invoke(a.token, 'pay', { n: -1 }, { idempotencyKey: 'first' })).resolves.toEqual({ status: 'replayed', callId: first.callId, replayed: true, settled: 'completed' });
    await expect(ledger.invoke(b.token, 'pay', { n: 0 }, { idempotencyKey: 'k0' })).resolves.toMatchObject({ status: 'completed', value: { n: 0 }, replayed: true });
    await expect(ledger.invoke(b.token, 'pay', { n: held - 1 }, { idempotencyKey: `k${held - 1}` })).resolves.toMatchObject({ status: 'completed', value: { n: held - 1 }, replayed: true });
    await ledger.close();
  });

  it('skips a SQLite snapshot of the previous key containers (keyBindings, keyQueues) and folds the events instead', async () => {
    await withKeyedSnapshot('old-keys.sqlite', async (path, now, { token, call }) => {
      // Every snapshot rewritten to the previous shape, its hash made to match: without the check it would be folded on.
      const db = new Database(path);
      const rows = db.prepare('SELECT seq, state FROM snapshots').all() as { seq: number; state: string }[];
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) {
        const { idempotencyBindings, ...rest } = JSON.parse(row.state) as LedgerState;
        const old = JSON.stringify({ ...rest, keyBindings: idempotencyBindings, keyQueues: [] });
        db.prepare('UPDATE snapshots SET state = ?, state_hash = ? WHERE seq = ?').run(old, sha256Hex(old), row.seq);
      }
      db.close();
      await expect(retryReopened(path, now, token)).resolves.toMatchObject({ status: 'replayed', callId: call.callId, settled: 'completed' });
    });
  });

  it('skips a SQLite snapshot whose bindings and queue entries lack keyDigest (the shape before perf14) and folds the events instead', async () => {
    await withKeyedSnapshot('flat-queue.sqlite', async (path, now, { token, call }) => {
      // A snapshot at the head, after the keyed call, its bindings (and so the queue entries, the same
      // objects) stripped of keyDigest, as the previous shape had them.
      const opened = createLedger({ store: sqliteStore({ path }), clock: now });
      const state = opened.state();
      await opened.close();
      expect(keyContainersCurrent(state)).toBe(true);
      const stripped = JSON.parse(JSON.stringify(state), (key, value: unknown) => (key === 'keyDigest' ? undefined : value)) as LedgerState;
      expect(JSON.stringify(stripped)).not.toBe(JSON.stringify(state));
      expect(keyContainersCurrent(stripped)).toBe(false);
      const db = new Database(path);
      expect(writeSnapshot(db, stripped, () => db.exec('BEGIN IMMEDIATE')).written).toBe(true);
      db.close();
      // retryReopened checks the reopened state against a replay: the stripped snapshot folded on would differ.
      await expect(retryReopened(path, now, token)).resolves.toMatchObject({ status: 'replayed', callId: call.callId, settled: 'completed' });
    });
  });

  it('keeps bindings through a SQLite snapshot', async () => {
    await withKeyedSnapshot('keys.sqlite', async (path, now, { token, call }) => {
      await expect(retryReopened(path, now, token)).resolves.toMatchObject({ status: 'replayed', callId: call.callId });
    });
  });
});

describe('idempotent retries: verify', () => {
  async function keyedLog(): Promise<readonly LedgerEvent[]> {
    const { ledger, token } = await keyedLedger();
    await ledger.invoke(token, 'pay', { amount: 1 }, { idempotencyKey: 'k' });
    await ledger.invoke(token, 'pay', { amount: 1 }, { idempotencyKey: 'k' });
    await ledger.invoke(token, 'pay', { amount: 2 }, { idempotencyKey: 'k' });
    return ledger.events();
  }

  it('re-derives bindings, replays and conflicts from the events alone', async () => {
    const events = await keyedLog();
    expect(events.map((e) => e.type).slice(-4)).toEqual(['call.admitted', 'call.completed', 'call.replayed', 'call.rejected']);
    expect(verify(events)).toMatchObject({ ok: true });
  });

  it('flags a replay that names another call', async () => {
    const forged = resealedWith(await keyedLog(), (e) => (e.type === 'call.replayed' ? { ...e, replayOf: 'c_other' } : e));
    expect(verify(forged).problems).toEqual([expect.objectContaining({ code: 'decision' })]);
  });

  it('flags a replay logged once the key had expired', async () => {
    const forged = resealedWith(await keyedLog(), (e) => (e.type === 'call.admitted' && e.idempotency ? { ...e, idempotency: { ...e.idempotency, expiresAt: e.at } } : e));
    expect(verify(forged).ok).toBe(false);
  });

  it('flags a conflict logged as an admission (a second binding of a live key)', async () => {
    const events = await keyedLog();
    const rejected = events.at(-1) as EventOf<'call.rejected'>;
    const forged = resealedWith(events, (e) =>
      e === rejected ? ({ type: 'call.admitted', seq: e.seq, at: e.at, prevHash: '', hash: '', callId: rejected.callId, grantId: rejected.grantId as string, tool: rejected.tool, reserved: { calls: 1, inputBytes: rejected.inputBytes as number }, idempotency: { ...(rejected.idempotency as { keyDigest: string; argsDigest: string }), expiresAt: e.at + 1_000 } } as LedgerEvent) : e,
    );
    expect(verify(forged).problems).toEqual([expect.objectContaining({ code: 'decision', message: expect.stringContaining('idempotency_conflict') })]);
  });

  it('flags an admission carrying a key digest that is not 64 hex digits (shape)', async () => {
    const forged = resealedWith(await keyedLog(), (e) => (e.type === 'call.admitted' && e.idempotency ? { ...e, idempotency: { ...e.idempotency, keyDigest: 'k' } } : e));
    expect(verify(forged).problems[0]).toMatchObject({ code: 'malformed' });
  });
});

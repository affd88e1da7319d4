import type { Command } from '../../src/domain/commands';
import type { EventPayload } from '../../src/domain/events';
import { bindingAt, keyStatus, type KeyedAdmission } from '../../src/domain/idempotency';
import type { KeyBinding } from '../../src/domain/state';
import { admissionTimes } from '../../src/domain/rateWindow';
import { shardGet } from '../../src/domain/shardedMap';
import { admit, given, issueCommand, payloads, registerNotes, T0 } from '../support/given';

// Meters, rate windows, call timeouts and idempotency keys at the decider and the fold: one rule per
// test, every state built inside the test from commands.
const settle = (over: Partial<Extract<Command, { type: 'settle' }>> = {}): Command => ({ type: 'settle', at: T0 + 2, callId: 'c1', outcome: 'completed', refund: false, ...over });
const timeout = (at: number, refund = false, callId = 'c1'): Command => ({ type: 'timeout', at, callId, refund });
const only = (commands: Command[], command: Command): EventPayload => {
  const [event, ...rest] = payloads(given(...commands).when(command));
  expect(rest).toEqual([]);
  return event as EventPayload;
};
const key = (over: Partial<KeyedAdmission> = {}): KeyedAdmission => ({ keyDigest: 'a'.repeat(64), argsDigest: 'b'.repeat(64), expiresAt: T0 + 1_000, keysMax: 10, ...over });
const metered = (meters: Record<string, number>) => issueCommand({ budget: { calls: 5, inputBytes: 100, meters } });
const rated = (calls: number, windowMs: number) => issueCommand({ budget: { calls: 10, inputBytes: 1_000, rate: { calls, windowMs } } });

describe('meters at admission', () => {
  it('reserves a cost within the grant’s meters with the call', () => {
    expect(only([registerNotes, metered({ usd: 10 })], admit({ cost: { usd: 10 } }))).toEqual({ type: 'call.admitted', callId: 'c1', grantId: 'g1', tool: 'notes.write', reserved: { calls: 1, inputBytes: 10, meters: { usd: 10 } } });
  });

  it('refuses a cost one past a meter, naming the meter and recording the cost', () => {
    expect(only([registerNotes, metered({ usd: 10 })], admit({ cost: { usd: 11 } }))).toEqual({ type: 'call.rejected', callId: 'c1', grantId: 'g1', tool: 'notes.write', reason: 'meter_budget_exhausted', inputBytes: 10, cost: { usd: 11 }, meter: 'usd' });
  });

  it('counts reservations in flight against the meter', () => {
    const event = only([registerNotes, metered({ usd: 10 }), admit({ cost: { usd: 6 } })], admit({ callId: 'c2', cost: { usd: 5 } }));
    expect(event).toMatchObject({ type: 'call.rejected', reason: 'meter_budget_exhausted', meter: 'usd' });
  });

  it('checks the call budget before meters', () => {
    const issue = issueCommand({ budget: { calls: 0, inputBytes: 100, meters: { usd: 0 } } });
    const event = only([registerNotes, issue], admit({ cost: { usd: 1 } }));
    expect(event).toEqual({ type: 'call.rejected', callId: 'c1', grantId: 'g1', tool: 'notes.write', reason: 'call_budget_exhausted', inputBytes: 10 });
  });

  it('leaves the cost out of a refusal that does not depend on it', () => {
    const event = only([registerNotes, metered({ usd: 10 })], admit({ cost: { usd: 1 }, argumentCheck: 'invalid_arguments' }));
    expect(event).not.toHaveProperty('cost');
  });

  it('folds a reservation into the grant’s meter use', () => {
    const { state } = given(registerNotes, metered({ usd: 10 }), admit({ cost: { usd: 4 } }));
    expect(shardGet(state.grants, 'g1')?.metersUsed).toEqual({ usd: 4 });
  });
});

describe('meters at settlement', () => {
  const reserve = (): Command[] => [registerNotes, metered({ usd: 10, tokens: 4 }), admit({ cost: { usd: 8, tokens: 4 } })];

  it('charges what the report says and releases the rest of the reservation', () => {
    expect(only(reserve(), settle({ report: { usd: 3, tokens: 4 } }))).toEqual({ type: 'call.completed', callId: 'c1', grantId: 'g1', tool: 'notes.write', charged: { tokens: 4, usd: 3 } });
    const { state } = given(...reserve(), settle({ report: { usd: 3, tokens: 4 } }));
    expect(shardGet(state.grants, 'g1')?.metersUsed).toEqual({ usd: 3, tokens: 4 });
  });

  it('flags an overrun and charges at most the reservation', () => {
    expect(only(reserve(), settle({ report: { usd: 9 } }))).toEqual({ type: 'call.completed', callId: 'c1', grantId: 'g1', tool: 'notes.write', charged: { tokens: 4, usd: 8 }, overrun: true });
  });

  it('flags an overrun the shell logged even when the report is within the reservation', () => {
    expect(only(reserve(), settle({ report: { usd: 1 }, overrunLogged: true }))).toMatchObject({ overrun: true, charged: { usd: 1, tokens: 4 } });
  });

  it('charges nothing and gives calls and bytes back on a refunded failure', () => {
    expect(only(reserve(), settle({ outcome: 'failed', refund: true, report: { usd: 5 } }))).toEqual({ type: 'call.failed', callId: 'c1', grantId: 'g1', tool: 'notes.write', refunded: { calls: 1, inputBytes: 10 }, charged: { tokens: 0, usd: 0 } });
    const { state } = given(...reserve(), settle({ outcome: 'failed', refund: true }));
    expect(shardGet(state.grants, 'g1')).toMatchObject({ used: { calls: 0, inputBytes: 0 }, metersUsed: { usd: 0, tokens: 0 } });
  });

  it('charges a failure without refund in full when there is no report, and marks a cancellation', () => {
    expect(only(reserve(), settle({ outcome: 'failed', cancelled: true }))).toEqual({ type: 'call.failed', callId: 'c1', grantId: 'g1', tool: 'notes.write', refunded: { calls: 0, inputBytes: 0 }, cancelled: true, charged: { tokens: 4, usd: 8 } });
  });

  it('flags an overrun on a failed call', () => {
    expect(only(reserve(), settle({ outcome: 'failed', report: { usd: 1, other: 1 } }))).toMatchObject({ type: 'call.failed', overrun: true, charged: { usd: 1, tokens: 4 } });
  });
});

describe('rate windows', () => {
  it('admits up to `calls` admissions in the window and refuses the next with the wait', () => {
    const commands = [registerNotes, rated(2, 1_000), admit({ at: T0 + 1 }), admit({ callId: 'c2', at: T0 + 10 })];
    const event = only(commands, admit({ callId: 'c3', at: T0 + 20 }));
    expect(event).toEqual({ type: 'call.rejected', callId: 'c3', grantId: 'g1', tool: 'notes.write', reason: 'rate_limited', inputBytes: 10, retryAfterMs: 981 });
  });

  it('admits again once the oldest admission has left the window', () => {
    const commands = [registerNotes, rated(2, 1_000), admit({ at: T0 + 1 }), admit({ callId: 'c2', at: T0 + 10 })];
    expect(only(commands, admit({ callId: 'c3', at: T0 + 1_001 }))).toMatchObject({ type: 'call.admitted' });
  });

  it('records the cost on a rate refusal', () => {
    const issue = issueCommand({ budget: { calls: 10, inputBytes: 1_000, meters: { usd: 100 }, rate: { calls: 1, windowMs: 100 } } });
    const event = only([registerNotes, issue, admit({ cost: { usd: 1 } })], admit({ callId: 'c2', at: T0 + 2, cost: { usd: 1 } }));
    expect(event).toMatchObject({ reason: 'rate_limited', cost: { usd: 1 }, retryAfterMs: 99 });
  });

  it('checks meters before the rate window', () => {
    const issue = issueCommand({ budget: { calls: 10, inputBytes: 1_000, meters: { usd: 1 }, rate: { calls: 1, windowMs: 100 } } });
    const event = only([registerNotes, issue, admit({ cost: { usd: 1 } })], admit({ callId: 'c2', at: T0 + 2, cost: { usd: 1 } }));
    expect(event).toMatchObject({ reason: 'meter_budget_exhausted' });
  });

  it('folds each admission’s time into the window, and a refusal does not count', () => {
    const { state } = given(registerNotes, rated(1, 100), admit({ at: T0 + 1 }), admit({ callId: 'c2', at: T0 + 5 }));
    expect(admissionTimes(shardGet(state.grants, 'g1')?.admissions)).toEqual([T0 + 1]);
  });
});

describe('call timeouts', () => {
  const timed = (ms: number) => issueCommand({ callTimeoutMs: ms });

  it('gives an admitted call its deadline: admission time plus the grant’s callTimeoutMs', () => {
    expect(only([registerNotes, timed(500)], admit())).toEqual({ type: 'call.admitted', callId: 'c1', grantId: 'g1', tool: 'notes.write', reserved: { calls: 1, inputBytes: 10 }, deadline: T0 + 501 });
  });

  it('keeps the deadline on the in-flight call', () => {
    const { state } = given(registerNotes, timed(500), admit());
    expect(shardGet(state.inFlight, 'c1')?.deadline).toBe(T0 + 501);
  });

  it('refuses to time out a call before its deadline, and one without a deadline', () => {
    expect(given(registerNotes, timed(500), admit()).when(timeout(T0 + 500))).toMatchObject({ ok: false, code: 'call_not_due' });
    expect(given(registerNotes, issueCommand(), admit()).when(timeout(T0 + 10_000))).toMatchObject({ ok: false, code: 'call_not_due' });
  });

  it('refuses to time out a call that is not in flight', () => {
    expect(given(registerNotes, timed(500)).when(timeout(T0 + 501))).toMatchObject({ ok: false, code: 'unknown_call' });
  });

  it('settles a call as timed out from its deadline on (inclusive), refunding when asked', () => {
    expect(only([registerNotes, timed(500), admit()], timeout(T0 + 501))).toEqual({ type: 'call.failed', callId: 'c1', grantId: 'g1', tool: 'notes.write', refunded: { calls: 0, inputBytes: 0 }, timedOut: true });
    expect(only([registerNotes, timed(500), admit()], timeout(T0 + 900, true))).toEqual({ type: 'call.failed', callId: 'c1', grantId: 'g1', tool: 'notes.write', refunded: { calls: 1, inputBytes: 10 }, timedOut: true });
  });

  it('charges a timed-out metered call its whole reservation, or nothing on a refund', () => {
    const issue = issueCommand({ callTimeoutMs: 50, budget: { calls: 5, inputBytes: 100, meters: { usd: 10 } } });
    expect(only([registerNotes, issue, admit({ cost: { usd: 7 } })], timeout(T0 + 51))).toMatchObject({ charged: { usd: 7 }, timedOut: true, refunded: { calls: 0, inputBytes: 0 } });
    expect(only([registerNotes, issue, admit({ cost: { usd: 7 } })], timeout(T0 + 51, true))).toMatchObject({ charged: { usd: 0 }, timedOut: true, refunded: { calls: 1, inputBytes: 10 } });
  });

  it('removes a timed-out call from flight and gives its budget back on a refund', () => {
    const { state } = given(registerNotes, timed(500), admit(), timeout(T0 + 501, true));
    expect(shardGet(state.inFlight, 'c1')).toBeUndefined();
    expect(shardGet(state.grants, 'g1')?.used).toEqual({ calls: 0, inputBytes: 0 });
  });
});

describe('idempotency keys', () => {
  it('binds a keyed admission’s key on the event', () => {
    expect(only([registerNotes, issueCommand()], admit({ idempotency: key() }))).toEqual({
      type: 'call.admitted', callId: 'c1', grantId: 'g1', tool: 'notes.write', reserved: { calls: 1, inputBytes: 10 },
      idempotency: { keyDigest: 'a'.repeat(64), argsDigest: 'b'.repeat(64), expiresAt: T0 + 1_000 },
    });
  });

  it('gives a keyed admission its deadline too', () => {
    expect(only([registerNotes, issueCommand({ callTimeoutMs: 9 })], admit({ idempotency: key() }))).toMatchObject({ deadline: T0 + 10, idempotency: { expiresAt: T0 + 1_000 } });
  });

  it('replays a retry with the same key, tool and arguments, reserving nothing', () => {
    const event = only([registerNotes, issueCommand(), admit({ idempotency: key() })], admit({ callId: 'c2', idempotency: key() }));
    expect(event).toEqual({ type: 'call.replayed', callId: 'c2', grantId: 'g1', tool: 'notes.write', replayOf: 'c1', idempotency: { keyDigest: 'a'.repeat(64), argsDigest: 'b'.repeat(64) } });
  });

  it('replays a retry even when the budget is spent', () => {
    const issue = issueCommand({ budget: { calls: 1, inputBytes: 100 } });
    expect(only([registerNotes, issue, admit({ idempotency: key() })], admit({ callId: 'c2', idempotency: key() }))).toMatchObject({ type: 'call.replayed', replayOf: 'c1' });
  });

  it('refuses a retry with the same key and other arguments as a conflict', () => {
    const event = only([registerNotes, issueCommand(), admit({ idempotency: key() })], admit({ callId: 'c2', idempotency: key({ argsDigest: 'c'.repeat(64) }) }));
    expect(event).toEqual({ type: 'call.rejected', callId: 'c2', grantId: 'g1', tool: 'notes.write', reason: 'idempotency_conflict', inputBytes: 10, idempotency: { keyDigest: 'a'.repeat(64), argsDigest: 'c'.repeat(64) } });
  });

  it('admits the key anew once its binding has expired', () => {
    const event = only([registerNotes, issueCommand(), admit({ idempotency: key({ expiresAt: T0 + 5 }) })], admit({ callId: 'c2', at: T0 + 5, idempotency: key() }));
    expect(event).toMatchObject({ type: 'call.admitted', callId: 'c2' });
  });

  it('refuses a new key when the tree holds keysMax live bindings, recording the bound', () => {
    const event = only([registerNotes, issueCommand(), admit({ idempotency: key({ keysMax: 1 }) })], admit({ callId: 'c2', idempotency: key({ keyDigest: 'd'.repeat(64), keysMax: 1 }) }));
    expect(event).toEqual({ type: 'call.rejected', callId: 'c2', grantId: 'g1', tool: 'notes.write', reason: 'idempotency_keys_exhausted', inputBytes: 10, idempotency: { keyDigest: 'd'.repeat(64), argsDigest: 'b'.repeat(64) }, keysMax: 1 });
  });

  it('records how a keyed call ended on its binding', () => {
    const { state } = given(registerNotes, issueCommand(), admit({ idempotency: key() }), settle({ outcome: 'failed' }));
    expect(keyStatus(state, bindingAt(state, 'g1', 'a'.repeat(64)) as KeyBinding)).toBe('failed');
    const completed = given(registerNotes, issueCommand(), admit({ idempotency: key() }), settle()).state;
    expect(keyStatus(completed, bindingAt(completed, 'g1', 'a'.repeat(64)) as KeyBinding)).toBe('completed');
  });

  it('records a keyed call that timed out as timed_out on its binding, not failed', () => {
    const { state } = given(registerNotes, issueCommand({ callTimeoutMs: 9 }), admit({ idempotency: key() }), timeout(T0 + 10));
    expect(keyStatus(state, bindingAt(state, 'g1', 'a'.repeat(64)) as KeyBinding)).toBe('timed_out');
  });
});

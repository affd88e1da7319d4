import type { Command, Narrowing } from '../../src/domain/commands';
import type { EventPayload } from '../../src/domain/events';
import { sealEvent } from '../../src/domain/chain';
import { decide } from '../../src/domain/decide';
import { evolve } from '../../src/domain/evolve';
import { initialState } from '../../src/domain/state';
import { admit, given, issueCommand, payloads, registerNotes, registerRead, T0 } from '../support/given';

// The decider's rules at the edges the scenario suites do not reach: a parent's budgets at their
// exact limit, the least timeout along a chain, which fields an event carries (absent, never
// `undefined`), the refusal messages, and the issue fields for resource templates.

const attenuate = (narrowing: Narrowing, grantId = 'c1', parentGrantId = 'g1'): Command => ({
  type: 'attenuate', at: T0 + 1, parentGrantId, grantId, tokenDigest: grantId.padEnd(64, 'c'), request: { kind: 'narrowing', narrowing },
});
const one = (commands: Command[], command: Command): EventPayload => {
  const events = payloads(given(...commands).when(command));
  expect(events).toHaveLength(1);
  return events[0] as EventPayload;
};
const rootWith = (budget: { calls: number; inputBytes: number }, over: Parameters<typeof issueCommand>[0] = {}) => issueCommand({ tools: ['notes.write', 'notes.read'], budget, ...over });

describe('a parent’s budgets bound its child’s calls', () => {
  it('admits the child call that uses the parent’s last call and refuses the next', () => {
    // The child is issued first, with the parent's whole budget; the parent then spends a call itself.
    const commands = [registerNotes, registerRead, rootWith({ calls: 2, inputBytes: 100 }), attenuate({}), admit({ callId: 'p1' })];
    expect(one(commands, admit({ callId: 'k1', grantId: 'c1' }))).toMatchObject({ type: 'call.admitted' });
    const spent = [...commands, admit({ callId: 'k1', grantId: 'c1' })];
    expect(one(spent, admit({ callId: 'k2', grantId: 'c1', at: T0 + 2 }))).toMatchObject({ type: 'call.rejected', reason: 'call_budget_exhausted' });
  });
  it('admits the child call that uses the parent’s last input byte and refuses one byte more', () => {
    const commands = [registerNotes, registerRead, rootWith({ calls: 5, inputBytes: 20 }), attenuate({}), admit({ callId: 'p1', inputBytes: 10 })];
    expect(one(commands, admit({ callId: 'k1', grantId: 'c1', inputBytes: 10 }))).toMatchObject({ type: 'call.admitted' });
    const spent = [...commands, admit({ callId: 'k1', grantId: 'c1', inputBytes: 10 })];
    expect(one(spent, admit({ callId: 'k2', grantId: 'c1', inputBytes: 1, at: T0 + 2 }))).toMatchObject({ type: 'call.rejected', reason: 'byte_budget_exhausted' });
  });
});

describe('a call’s deadline along its chain', () => {
  it('uses the least callTimeoutMs of the grant and its ancestors', () => {
    const commands = [registerNotes, registerRead, rootWith({ calls: 5, inputBytes: 100 }, { callTimeoutMs: 1_000 }), attenuate({ callTimeoutMs: 400 })];
    expect(one(commands, admit({ grantId: 'c1' }))).toStrictEqual({ type: 'call.admitted', callId: 'c1', grantId: 'c1', tool: 'notes.write', reserved: { calls: 1, inputBytes: 10 }, ancestors: ['g1'], deadline: T0 + 1 + 400 });
  });
  it('names the ancestors of a keyed child call', () => {
    const key = { keyDigest: 'a'.repeat(64), argsDigest: 'b'.repeat(64), expiresAt: T0 + 1_000, keysMax: 10 };
    const commands = [registerNotes, registerRead, rootWith({ calls: 5, inputBytes: 100 }), attenuate({})];
    expect(one(commands, admit({ grantId: 'c1', idempotency: key }))).toMatchObject({ type: 'call.admitted', ancestors: ['g1'] });
  });
});

describe('events carry only the fields that apply', () => {
  it('gives a root’s plain call no ancestors or deadline field', () => {
    expect(one([registerNotes, issueCommand()], admit())).toStrictEqual({ type: 'call.admitted', callId: 'c1', grantId: 'g1', tool: 'notes.write', reserved: { calls: 1, inputBytes: 10 } });
  });
  it('gives a root’s timed call a deadline and no ancestors field', () => {
    expect(one([registerNotes, issueCommand({ callTimeoutMs: 50 })], admit())).toStrictEqual({ type: 'call.admitted', callId: 'c1', grantId: 'g1', tool: 'notes.write', reserved: { calls: 1, inputBytes: 10 }, deadline: T0 + 51 });
  });
  it('gives a rejection without a size, cost, meter or wait exactly the fields that decided it', () => {
    const refused = one([registerNotes, issueCommand()], admit({ argumentCheck: 'invalid_arguments', inputBytes: undefined, cost: { usd: 1 } }));
    expect(refused).toStrictEqual({ type: 'call.rejected', callId: 'c1', grantId: 'g1', tool: 'notes.write', reason: 'invalid_arguments' });
  });
  it('refuses the same idempotency key with the same arguments for another tool as a conflict', () => {
    const key = { keyDigest: 'a'.repeat(64), argsDigest: 'b'.repeat(64), expiresAt: T0 + 1_000, keysMax: 10 };
    const commands = [registerNotes, registerRead, issueCommand({ tools: ['notes.write', 'notes.read'] }), admit({ idempotency: key })];
    expect(one(commands, admit({ callId: 'c2', tool: 'notes.read', idempotency: key }))).toMatchObject({ type: 'call.rejected', reason: 'idempotency_conflict' });
  });
});

describe('issue with resource templates', () => {
  it('logs the templates and the fs base it was given, and neither when not given', () => {
    const templates = { resourceTemplates: { 'notes.write': ['notes:/{path}'] }, fsBase: '/srv' };
    const withBoth = one([registerNotes], { ...issueCommand(), ...templates } as Command);
    expect(withBoth).toMatchObject({ type: 'grant.issued', ...templates });
    const onlyBase = one([registerNotes], { ...issueCommand(), fsBase: '/srv' } as Command);
    expect(Object.keys(onlyBase).sort()).toEqual(['fsBase', 'grantId', 'scope', 'tokenDigest', 'type']);
    const onlyTemplates = one([registerNotes], { ...issueCommand(), resourceTemplates: templates.resourceTemplates } as Command);
    expect(Object.keys(onlyTemplates).sort()).toEqual(['grantId', 'resourceTemplates', 'scope', 'tokenDigest', 'type']);
    expect(Object.keys(one([registerNotes], issueCommand())).sort()).toEqual(['grantId', 'scope', 'tokenDigest', 'type']);
  });
});

describe('refusals say why', () => {
  const running = [registerNotes, issueCommand({ callTimeoutMs: 50 }), admit()];
  it('names the missing grant, call or deadline in the message', () => {
    expect(given(registerNotes).when({ type: 'revoke', at: T0, grantId: 'nope', abortInFlight: false })).toMatchObject({ ok: false, code: 'unknown_grant', message: 'no grant has that id' });
    expect(given(registerNotes).when({ type: 'settle', at: T0, callId: 'nope', outcome: 'completed', refund: false })).toMatchObject({ ok: false, code: 'unknown_call', message: 'no call in flight has that id' });
    expect(given(registerNotes).when({ type: 'timeout', at: T0, callId: 'nope', refund: false })).toMatchObject({ ok: false, code: 'unknown_call', message: 'no call in flight has that id' });
    expect(given(...running).when({ type: 'timeout', at: T0 + 2, callId: 'c1', refund: false })).toMatchObject({ ok: false, code: 'call_not_due', message: 'the call has no deadline or it has not come yet' });
    expect(given(registerNotes).when({ type: 'hop', at: T0, callId: 'nope', hop: 0, resource: undefined, address: undefined })).toMatchObject({ ok: false, code: 'unknown_call', message: 'no call in flight has that id' });
  });
});

describe('settling', () => {
  it('marks a cancelled failure as cancelled and a plain failure not', () => {
    const running = [registerNotes, issueCommand(), admit()];
    expect(one(running, { type: 'settle', at: T0 + 2, callId: 'c1', outcome: 'failed', refund: false, cancelled: true })).toMatchObject({ type: 'call.failed', cancelled: true });
    expect(one(running, { type: 'settle', at: T0 + 2, callId: 'c1', outcome: 'failed', refund: false })).not.toHaveProperty('cancelled');
  });
  it('charges a metered call that completed what it reported, never refunding it', () => {
    const metered = [registerNotes, issueCommand({ budget: { calls: 2, inputBytes: 100, meters: { usd: 10 } } }), admit({ cost: { usd: 5 } })];
    expect(one(metered, { type: 'settle', at: T0 + 2, callId: 'c1', outcome: 'completed', refund: true, report: { usd: 2 } })).toStrictEqual({ type: 'call.completed', callId: 'c1', grantId: 'g1', tool: 'notes.write', charged: { usd: 2 } });
  });
});

// A state folded from events the decider would not write (a forged or hand-edited log): the
// decider stays as strict as the chain's strictest grant. `verify` refuses such a log; replaying
// it must still not make a child more lenient than its ancestors.
const forged = (...payloads: EventPayload[]) => {
  let state = initialState;
  for (const payload of payloads) state = evolve(state, sealEvent(payload, T0, state.head));
  return state;
};
const notesTool: EventPayload = { type: 'tool.registered', tool: 'notes.write', inputSchema: { type: 'object' } };
const forgedScope = (budget: Extract<EventPayload, { type: 'grant.issued' }>['scope']['budget'], callTimeoutMs?: number) => ({
  tools: ['notes.write'], args: {}, resources: ['notes:/drafts/'], notBefore: T0, expiresAt: T0 + 60_000, budget, ...(callTimeoutMs === undefined ? {} : { callTimeoutMs }),
});
const forgedChild = (scope: ReturnType<typeof forgedScope>): EventPayload => ({
  type: 'grant.issued', grantId: 'c1', tokenDigest: 'c'.repeat(64), scope, parentGrantId: 'g1', parentLeft: { calls: 5, inputBytes: 100 },
});

describe('a forged child grant is held to its ancestors', () => {
  it('gives a child call the ancestor’s shorter callTimeoutMs when the child’s own is longer', () => {
    const state = forged(notesTool, { type: 'grant.issued', grantId: 'g1', tokenDigest: 'a'.repeat(64), scope: forgedScope({ calls: 5, inputBytes: 100 }, 400) }, forgedChild(forgedScope({ calls: 5, inputBytes: 100 }, 1_000)));
    expect(payloads(decide(state, admit({ grantId: 'c1' })))).toStrictEqual([
      { type: 'call.admitted', callId: 'c1', grantId: 'c1', tool: 'notes.write', reserved: { calls: 1, inputBytes: 10 }, ancestors: ['g1'], deadline: T0 + 1 + 400 },
    ]);
  });
  it('rate-limits a child without a rate window of its own by its ancestor’s full window', () => {
    const rated = forgedScope({ calls: 5, inputBytes: 100, rate: { calls: 1, windowMs: 1_000 } });
    const issued = forged(notesTool, { type: 'grant.issued', grantId: 'g1', tokenDigest: 'a'.repeat(64), scope: rated }, forgedChild(forgedScope({ calls: 5, inputBytes: 100 })));
    const first = payloads(decide(issued, admit({ callId: 'p1' })))[0] as EventPayload;
    const afterOne = evolve(issued, sealEvent(first, T0 + 1, issued.head));
    expect(payloads(decide(afterOne, admit({ callId: 'k1', grantId: 'c1', at: T0 + 2 })))).toMatchObject([{ type: 'call.rejected', reason: 'rate_limited', retryAfterMs: 999 }]);
  });
});

describe('events carry only the fields that apply (keys, waits, hops)', () => {
  it('gives a root’s keyed call no ancestors field', () => {
    const key = { keyDigest: 'a'.repeat(64), argsDigest: 'b'.repeat(64), expiresAt: T0 + 1_000, keysMax: 10 };
    expect(one([registerNotes, issueCommand()], admit({ idempotency: key }))).toStrictEqual({
      type: 'call.admitted', callId: 'c1', grantId: 'g1', tool: 'notes.write', reserved: { calls: 1, inputBytes: 10 }, idempotency: { keyDigest: key.keyDigest, argsDigest: key.argsDigest, expiresAt: key.expiresAt },
    });
  });
  it('gives a rate-limited call that passed no cost no cost field', () => {
    const rated = [registerNotes, issueCommand({ budget: { calls: 5, inputBytes: 100, rate: { calls: 1, windowMs: 1_000 } } }), admit()];
    expect(one(rated, admit({ callId: 'c2', at: T0 + 2 }))).toStrictEqual({ type: 'call.rejected', callId: 'c2', grantId: 'g1', tool: 'notes.write', reason: 'rate_limited', inputBytes: 10, retryAfterMs: 999 });
  });
  it('gives a hop without a resource or an address neither field', () => {
    const running = [registerNotes, issueCommand(), admit()];
    expect(one(running, { type: 'hop', at: T0 + 2, callId: 'c1', hop: 0, resource: undefined, address: undefined })).toStrictEqual({
      type: 'fetch.hop', callId: 'c1', grantId: 'g1', tool: 'notes.write', hop: 0, outcome: 'refused', reason: 'invalid_resource',
    });
  });
});

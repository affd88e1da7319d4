import type { Command } from '../../src/domain/commands';
import type { LedgerEvent } from '../../src/domain/events';
import { commandFromEvent } from '../../src/verification/commandFromEvent';
import { verify } from '../../src/verification/verify';
import { admit, given, issueCommand, registerNotes, registerRead, T0 } from '../support/given';

// `verify` re-decides every event from the command `commandFromEvent` rebuilds out of it. A log
// with every event shape the decider writes must verify: a rebuilt command that lost or changed a
// field the decision depends on re-decides to another event. Each log is built inside its test.

const key = (n: number) => ({ keyDigest: String(n).repeat(64).slice(0, 64), argsDigest: 'b'.repeat(64), expiresAt: T0 + 50_000, keysMax: 10 });
const settle = (callId: string, at: number, over: Partial<Extract<Command, { type: 'settle' }>> = {}): Command => ({ type: 'settle', at, callId, outcome: 'completed', refund: false, ...over });
const attenuate = (grantId: string, narrowing: object, at = T0 + 1): Command => ({
  type: 'attenuate', at, parentGrantId: 'g1', grantId, tokenDigest: grantId.padEnd(64, 'e'), request: { kind: 'narrowing', narrowing },
} as Command);

function session(): LedgerEvent[] {
  const both = ['notes.write', 'notes.read'];
  return given(
    registerNotes,
    registerRead,
    { ...issueCommand({ tools: both, budget: { calls: 40, inputBytes: 4_000 } }), resourceTemplates: { 'notes.write': ['notes:/{path}'] }, fsBase: '/srv' } as Command,
    issueCommand({ tools: both, budget: { calls: 40, inputBytes: 4_000, meters: { usd: 20 }, rate: { calls: 30, windowMs: 60_000 } } }, 'g2'),
    issueCommand({ tools: both, callTimeoutMs: 10, resources: ['https:/api.example.com:443/'] }, 'g3'),
    attenuate('c1', { tools: ['notes.write'] }),
    attenuate('c2', { budget: { calls: 999 } }),
    attenuate('c3', { tools: 5 }),
    // Plain, keyed and replayed calls; completed and failed with and without a refund, cancelled.
    admit({ callId: 'a1' }),
    settle('a1', T0 + 2),
    admit({ callId: 'a2', idempotency: key(1) }),
    settle('a2', T0 + 2),
    admit({ callId: 'a3', idempotency: key(1), at: T0 + 3 }),
    admit({ callId: 'a4', at: T0 + 3 }),
    settle('a4', T0 + 4, { outcome: 'failed', refund: true }),
    admit({ callId: 'a5', at: T0 + 4 }),
    settle('a5', T0 + 5, { outcome: 'failed', refund: false, cancelled: true }),
    admit({ callId: 'a6', grantId: 'c1', at: T0 + 5 }),
    settle('a6', T0 + 6, { outcome: 'failed', refund: false }),
    // Rejections of every kind of check, one with a cost that decided and one keyed.
    admit({ callId: 'r1', argumentCheck: 'invalid_arguments', inputBytes: undefined, at: T0 + 6 }),
    admit({ callId: 'r2', argumentCheck: 'argument_not_permitted', at: T0 + 6 }),
    admit({ callId: 'r3', resourceCheck: 'invalid_resource', at: T0 + 6 }),
    admit({ callId: 'r4', resourceCheck: 'resource_not_permitted', at: T0 + 6 }),
    admit({ callId: 'r5', grantId: 'g2', cost: { usd: 21 }, at: T0 + 6 }),
    admit({ callId: 'r6', tool: 'notes.none', idempotency: key(2), at: T0 + 6 }),
    // Metered calls: charged as reported, overrun, a failure with a report, refunded.
    admit({ callId: 'm1', grantId: 'g2', cost: { usd: 5 }, at: T0 + 7 }),
    settle('m1', T0 + 8, { report: { usd: 2 } }),
    admit({ callId: 'm2', grantId: 'g2', cost: { usd: 5 }, at: T0 + 8 }),
    settle('m2', T0 + 9, { report: { usd: 9 } }),
    admit({ callId: 'm3', grantId: 'g2', cost: { usd: 5 }, idempotency: key(3), at: T0 + 9 }),
    settle('m3', T0 + 10, { outcome: 'failed', refund: false, cancelled: true, report: { usd: 1 } }),
    admit({ callId: 'm4', grantId: 'g2', cost: { usd: 5 }, at: T0 + 10 }),
    settle('m4', T0 + 11, { outcome: 'failed', refund: true }),
    // Timeouts with and without a refund, and a fetch hop of a running call.
    admit({ callId: 't1', grantId: 'g3', at: T0 + 11 }),
    { type: 'timeout', at: T0 + 21, callId: 't1', refund: false },
    admit({ callId: 't2', grantId: 'g3', at: T0 + 21 }),
    { type: 'hop', at: T0 + 22, callId: 't2', hop: 0, resource: 'https:/api.example.com:443/x', address: '93.184.216.34' },
    { type: 'timeout', at: T0 + 31, callId: 't2', refund: true },
    // Revocations: by a delegation's parent, refused for a grant outside the chain, by the host.
    { type: 'revokeDelegation', at: T0 + 31, byGrantId: 'g1', grantId: 'c1', abortInFlight: true },
    { type: 'revokeDelegation', at: T0 + 31, byGrantId: 'g2', grantId: 'g1', abortInFlight: false },
    { type: 'revoke', at: T0 + 32, grantId: 'g2', abortInFlight: true },
  ).events;
}

describe('verify over every event shape the decider writes', () => {
  it('accepts the log', () => {
    const log = session();
    expect(verify(log)).toEqual({ ok: true, checked: log.length, problems: [] });
  });

  it('holds every shape (so the log above cannot quietly lose one)', () => {
    const marks = ['resourceTemplates', 'fsBase', 'parentGrantId', 'revokedBy', 'idempotency', 'replayOf', 'cost', 'charged', 'overrun', 'cancelled', 'timedOut'];
    const shape = (e: LedgerEvent): string => [e.type, ...(e.type === 'attenuation.rejected' ? [e.reason] : []), ...marks.filter((k) => k in e)].join(' ');
    expect([...new Set(session().map(shape))].sort()).toEqual([
      'attenuation.rejected attenuation_invalid parentGrantId',
      'attenuation.rejected attenuation_widens parentGrantId',
      'call.admitted',
      'call.admitted idempotency',
      'call.completed',
      'call.completed charged',
      'call.completed charged overrun',
      'call.failed',
      'call.failed cancelled',
      'call.failed charged',
      'call.failed charged cancelled',
      'call.failed timedOut',
      'call.rejected',
      'call.rejected cost',
      'call.rejected idempotency',
      'call.replayed idempotency replayOf',
      'fetch.hop',
      'grant.issued',
      'grant.issued parentGrantId',
      'grant.issued resourceTemplates fsBase',
      'grant.revoked',
      'grant.revoked revokedBy',
      'revocation.rejected revokedBy',
      'tool.registered',
    ]);
  });

  it('rebuilds a rejection’s argument and resource checks, size and cost as logged', () => {
    const byId = new Map(session().map((e) => ['callId' in e ? `${e.type}:${String(e.callId)}` : e.type, e]));
    expect(commandFromEvent(byId.get('call.rejected:r1') as LedgerEvent)).toMatchObject({ argumentCheck: 'invalid_arguments', resourceCheck: 'ok' });
    expect(commandFromEvent(byId.get('call.rejected:r4') as LedgerEvent)).toMatchObject({ argumentCheck: 'ok', resourceCheck: 'resource_not_permitted' });
    expect(commandFromEvent(byId.get('call.rejected:r5') as LedgerEvent)).toMatchObject({ cost: { usd: 21 } });
    expect(commandFromEvent(byId.get('call.rejected:r2') as LedgerEvent)).not.toHaveProperty('cost');
  });

  it('rebuilds a failure’s refund, cancellation and report as logged', () => {
    const byId = new Map(session().map((e) => ['callId' in e ? `${e.type}:${String(e.callId)}` : e.type, e]));
    expect(commandFromEvent(byId.get('call.failed:a4') as LedgerEvent)).toStrictEqual({ type: 'settle', at: T0 + 4, callId: 'a4', outcome: 'failed', refund: true });
    expect(commandFromEvent(byId.get('call.failed:a5') as LedgerEvent)).toStrictEqual({ type: 'settle', at: T0 + 5, callId: 'a5', outcome: 'failed', refund: false, cancelled: true });
    expect(commandFromEvent(byId.get('call.failed:m3') as LedgerEvent)).toStrictEqual({ type: 'settle', at: T0 + 10, callId: 'm3', outcome: 'failed', refund: false, cancelled: true, report: { usd: 1 }, overrunLogged: false });
    expect(commandFromEvent(byId.get('call.failed:t2') as LedgerEvent)).toStrictEqual({ type: 'timeout', at: T0 + 31, callId: 't2', refund: true });
  });

  it('rebuilds an issue with its resource templates and fs base, and a root issue without them', () => {
    const [, , withTemplates, plain] = session();
    expect(commandFromEvent(withTemplates as LedgerEvent)).toMatchObject({ type: 'issue', resourceTemplates: { 'notes.write': ['notes:/{path}'] }, fsBase: '/srv' });
    expect(Object.keys(commandFromEvent(plain as LedgerEvent)).sort()).toEqual(['at', 'grantId', 'scope', 'tokenDigest', 'type']);
  });
});

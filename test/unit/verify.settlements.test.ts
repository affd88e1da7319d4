import type { Command } from '../../src/domain/commands';
import { verify } from '../../src/verification/verify';
import { admit, given, issueCommand, registerNotes, T0 } from '../support/given';

// Settlements that commandFromEvent must rebuild exactly for `verify` to re-decide them: a refund
// read from a call that reserved no input bytes, and a failed metered call whose report overran.

const failed = (callId: string, at: number, over: Partial<Extract<Command, { type: 'settle' }>> = {}): Command => ({ type: 'settle', at, callId, outcome: 'failed', refund: true, ...over });

describe('verify: refunds', () => {
  it('accepts a refunded failure of a call that reserved no input bytes (the refunded call alone says it was refunded)', () => {
    const log = given(registerNotes, issueCommand(), admit({ inputBytes: 0 }), failed('c1', T0 + 2)).events;
    expect(log[3]).toMatchObject({ type: 'call.failed', refunded: { calls: 1, inputBytes: 0 } });
    expect(verify(log)).toEqual({ ok: true, checked: 4, problems: [] });
  });

  it('accepts a refunded timeout of a call that reserved no input bytes', () => {
    const log = given(registerNotes, issueCommand({ callTimeoutMs: 10 }), admit({ inputBytes: 0 }), { type: 'timeout', at: T0 + 11, callId: 'c1', refund: true }).events;
    expect(log[3]).toMatchObject({ type: 'call.failed', timedOut: true, refunded: { calls: 1, inputBytes: 0 } });
    expect(verify(log)).toEqual({ ok: true, checked: 4, problems: [] });
  });
});

describe('verify: metered failures', () => {
  it('accepts a failed metered call whose report overran its reservation', () => {
    const log = given(
      registerNotes,
      issueCommand({ budget: { calls: 2, inputBytes: 100, meters: { usd: 20 } } }),
      admit({ cost: { usd: 5 } }),
      failed('c1', T0 + 2, { refund: false, report: { usd: 9 } }),
    ).events;
    expect(log[3]).toMatchObject({ type: 'call.failed', charged: { usd: 5 }, overrun: true });
    expect(verify(log)).toEqual({ ok: true, checked: 4, problems: [] });
  });
});

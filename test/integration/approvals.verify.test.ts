import { createLedger, replay, sqliteStore, verify, type EventOf, type LedgerEvent } from '../../src';
import { reseal } from '../support/sealedLog';
import { sqliteTempDir } from '../support/sqliteFiles';
import { manualClock } from '../support/fixtures';
import { hour, manualTimers, paymentsLedger, pendingOf } from '../support/approvals';
import { closeLedgers } from '../support/approvals';

afterEach(closeLedgers);

// The log proves approvals: verify re-derives them, and a forger who re-seals the whole chain is
// still caught by the re-decided rules.

async function approvedLog(): Promise<LedgerEvent[]> {
  const { ledger, clock } = await paymentsLedger();
  const { token } = await ledger.issue({ tools: ['pay'], expiresAt: clock.now() + hour, budget: { calls: 5, inputBytes: 1_000 }, approvals: { pay: true }, approvalTimeoutMs: 10_000 });
  const outcome = ledger.invoke(token, 'pay', { to: 'bob', amount: 1 });
  const [pending] = await pendingOf(ledger);
  clock.advance(100);
  await ledger.approve(pending!.approvalId, { by: 'alice' });
  await outcome;
  return ledger.events().slice();
}

const indexOf = (events: readonly LedgerEvent[], type: LedgerEvent['type']): number => events.findIndex((e) => e.type === type);

describe('verify re-derives approvals', () => {
  it('passes an honest log with an approved call', async () => {
    expect(verify(await approvedLog())).toMatchObject({ ok: true, problems: [] });
  });

  it('catches a call that ran without its approval (the request turned into a plain admission)', async () => {
    const events = await approvedLog();
    const i = indexOf(events, 'approval.requested');
    const requested = events[i] as EventOf<'approval.requested'>;
    const admitted = { seq: requested.seq, at: requested.at, prevHash: requested.prevHash, hash: '', type: 'call.admitted', callId: requested.callId, grantId: requested.grantId, tool: requested.tool, reserved: requested.reserved } as LedgerEvent;
    // The approval event dropped, the admission in place of the request.
    const forged = reseal([...events.slice(0, i), admitted, ...events.slice(i + 2)], i);
    const result = verify(forged);
    expect(result.ok).toBe(false);
    expect(result.problems[0]).toMatchObject({ seq: requested.seq, code: 'decision', message: expect.stringContaining('approval_required') });
  });

  it('catches a call settled while it still waited (no approval in the log)', async () => {
    const events = await approvedLog();
    const i = indexOf(events, 'approval.resolved');
    const forged = reseal([...events.slice(0, i), ...events.slice(i + 1)], i);
    const result = verify(forged);
    expect(result.ok).toBe(false);
    expect(result.problems[0]).toMatchObject({ code: 'decision', message: expect.stringContaining('unknown_call') });
  });

  it('catches an approval used twice', async () => {
    const events = await approvedLog();
    const i = indexOf(events, 'approval.resolved');
    const forged = reseal([...events.slice(0, i + 1), events[i] as LedgerEvent, ...events.slice(i + 1)], i + 1);
    const result = verify(forged);
    expect(result.ok).toBe(false);
    expect(result.problems[0]).toMatchObject({ seq: (events[i] as LedgerEvent).seq + 1, code: 'decision', message: expect.stringContaining('approval_resolved') });
  });

  it('catches an approval id used for a second call', async () => {
    const { ledger, clock } = await paymentsLedger();
    const { token } = await ledger.issue({ tools: ['pay'], expiresAt: clock.now() + hour, budget: { calls: 5, inputBytes: 1_000 }, approvals: { pay: true } });
    void ledger.invoke(token, 'pay', { to: 'bob', amount: 1 });
    void ledger.invoke(token, 'pay', { to: 'bob', amount: 2 });
    await pendingOf(ledger, 2);
    const events = ledger.events().slice();
    const [first, second] = events.filter((e): e is EventOf<'approval.requested'> => e.type === 'approval.requested');
    const i = events.indexOf(second as LedgerEvent);
    const forged = reseal([...events.slice(0, i), { ...second, approvalId: first!.approvalId } as LedgerEvent, ...events.slice(i + 1)], i);
    expect(verify(forged).problems[0]).toMatchObject({ seq: second!.seq, code: 'decision', message: expect.stringContaining('invalid_approval') });
  });

  it('catches a timeout logged before its deadline', async () => {
    const events = await approvedLog();
    const i = indexOf(events, 'approval.resolved');
    const resolved = events[i] as EventOf<'approval.resolved'>;
    const early = { ...resolved, outcome: 'timed_out' } as Record<string, unknown>;
    delete early.by;
    const forged = reseal([...events.slice(0, i), early as unknown as LedgerEvent], i);
    const result = verify(forged);
    expect(result.ok).toBe(false);
    expect(result.problems[0]).toMatchObject({ seq: resolved.seq, code: 'decision', message: expect.stringContaining('approval_not_due') });
  });

  it('catches an approval dated at or after its deadline, and a deadline longer than the grant allows', async () => {
    const events = await approvedLog();
    const i = indexOf(events, 'approval.resolved');
    const requested = events[indexOf(events, 'approval.requested')] as EventOf<'approval.requested'>;
    const late = reseal([...events.slice(0, i), { ...(events[i] as LedgerEvent), at: requested.deadline } as LedgerEvent], i);
    expect(verify(late).problems[0]).toMatchObject({ code: 'decision', message: expect.stringContaining('approval_expired') });
    const j = indexOf(events, 'approval.requested');
    const longer = reseal([...events.slice(0, j), { ...requested, deadline: requested.deadline + 1 } as LedgerEvent, ...events.slice(j + 1)], j);
    expect(verify(longer).ok).toBe(false);
  });
});

describe('a reopened ledger keeps pending approvals', () => {
  const tmp = sqliteTempDir();
  afterAll(() => tmp.cleanup());

  it('replay rebuilds them, and the reopened ledger times them out when due (releasing the budget)', async () => {
    const file = tmp.file('reopen.sqlite');
    const clock = manualClock();
    const first = createLedger({ clock: clock.now, store: sqliteStore({ path: file }), setTimer: manualTimers().setTimer });
    await first.registerTool({ name: 'pay', inputSchema: { type: 'object' }, run: async () => 'ok' });
    const { grantId, token } = await first.issue({ tools: ['pay'], expiresAt: clock.now() + hour, budget: { calls: 5, inputBytes: 1_000 }, approvals: { pay: true }, approvalTimeoutMs: 60_000 });
    const waiting = first.invoke(token, 'pay', {});
    const [pending] = await pendingOf(first);
    await first.close();
    await expect(waiting).resolves.toMatchObject({ status: 'rejected', reason: 'ledger_unavailable' });

    const timers = manualTimers();
    const second = createLedger({ clock: clock.now, store: sqliteStore({ path: file }), setTimer: timers.setTimer });
    expect(second.pendingApprovals()).toEqual([pending]);
    expect(replay(second.events())).toEqual(second.state());
    expect(second.usage(grantId).calls.used).toBe(1);
    clock.advance(60_000);
    timers.fire();
    for (let i = 0; i < 50 && second.pendingApprovals().length > 0; i++) await Promise.resolve();
    expect(second.pendingApprovals()).toEqual([]);
    expect(second.usage(grantId).calls.used).toBe(0);
    const last = second.events().at(-1) as EventOf<'approval.resolved'>;
    expect(last).toMatchObject({ type: 'approval.resolved', approvalId: pending!.approvalId, outcome: 'timed_out', at: pending!.deadline });
    expect(verify(second.events()).ok).toBe(true);
    await second.close();
  });

  it('runDueTimeouts times out a due approval, and an approval not yet due stays', async () => {
    const { ledger, clock } = await paymentsLedger();
    const { token } = await ledger.issue({ tools: ['pay'], expiresAt: clock.now() + hour, budget: { calls: 5, inputBytes: 1_000 }, approvals: { pay: true }, approvalTimeoutMs: 1_000 });
    const outcome = ledger.invoke(token, 'pay', { to: 'bob', amount: 1 });
    await pendingOf(ledger);
    clock.advance(999);
    await expect(ledger.runDueTimeouts()).resolves.toBe(0);
    clock.advance(1);
    await expect(ledger.runDueTimeouts()).resolves.toBe(1);
    await expect(outcome).resolves.toMatchObject({ reason: 'approval_timeout' });
  });
});

import { replay, verify, type EventOf, type LedgerEvent } from '../../src';
import { hour, over100, paymentsLedger, pendingOf, settle } from '../support/approvals';
import { closeLedgers } from '../support/approvals';

afterEach(closeLedgers);

const ofType = <T extends LedgerEvent['type']>(events: readonly LedgerEvent[], type: T) => events.filter((e): e is EventOf<T> => e.type === type);

describe('approvals: a person decides, the log proves it', () => {
  it('a call under a `true` rule waits, runs only after approve, and the log records who approved', async () => {
    const { ledger, paid, clock } = await paymentsLedger();
    const { grantId, token } = await ledger.issue({ tools: ['pay'], expiresAt: clock.now() + hour, budget: { calls: 5, inputBytes: 1_000 }, approvals: { pay: true } });
    const outcome = ledger.invoke(token, 'pay', { to: 'bob', amount: 5 });
    const [pending] = await pendingOf(ledger);
    expect(pending).toMatchObject({ grantId, tool: 'pay', deadline: clock.now() + 900_000 });
    expect(paid).toEqual([]);
    expect(ledger.usage(grantId).calls.used).toBe(1); // reserved while waiting
    await expect(ledger.approve(pending!.approvalId, { by: 'alice', note: 'ok' })).resolves.toEqual({ status: 'approved' });
    await expect(outcome).resolves.toMatchObject({ status: 'completed', value: 'paid 5' });
    expect(paid).toEqual([5]);
    const [resolved] = ofType(ledger.events(), 'approval.resolved');
    expect(resolved).toMatchObject({ approvalId: pending!.approvalId, outcome: 'approved', by: 'alice', note: 'ok' });
    expect(verify(ledger.events()).ok).toBe(true);
    expect(replay(ledger.events())).toEqual(ledger.state());
  });

  it('a schema rule asks only about the calls whose arguments match it (payments over 100)', async () => {
    const { ledger, paid, clock } = await paymentsLedger();
    const { token } = await ledger.issue({ tools: ['pay'], expiresAt: clock.now() + hour, budget: { calls: 5, inputBytes: 1_000 }, approvals: { pay: over100 } });
    await expect(ledger.invoke(token, 'pay', { to: 'bob', amount: 100 })).resolves.toMatchObject({ status: 'completed' });
    const big = ledger.invoke(token, 'pay', { to: 'bob', amount: 101 });
    const [pending] = await pendingOf(ledger);
    expect(paid).toEqual([100]);
    await ledger.approve(pending!.approvalId, { by: 'alice' });
    await expect(big).resolves.toMatchObject({ status: 'completed' });
    expect(paid).toEqual([100, 101]);
  });

  it('deny rejects the call approval_denied, never runs it, and releases its reservation', async () => {
    const { ledger, paid, clock } = await paymentsLedger();
    const { grantId, token } = await ledger.issue({ tools: ['pay'], expiresAt: clock.now() + hour, budget: { calls: 5, inputBytes: 1_000 }, approvals: { pay: true } });
    const outcome = ledger.invoke(token, 'pay', { to: 'mallory', amount: 9 });
    const [pending] = await pendingOf(ledger);
    await expect(ledger.deny(pending!.approvalId, { by: 'alice', reason: 'unknown payee' })).resolves.toEqual({ status: 'denied' });
    await expect(outcome).resolves.toMatchObject({ status: 'rejected', reason: 'approval_denied' });
    expect(paid).toEqual([]);
    expect(ledger.usage(grantId).calls.used).toBe(0);
    expect(ofType(ledger.events(), 'approval.resolved')[0]).toMatchObject({ outcome: 'denied', by: 'alice', note: 'unknown payee' });
    expect(verify(ledger.events()).ok).toBe(true);
  });

  it('an approval is used once: a second approve or deny, an unknown id and a late one are refused', async () => {
    const { ledger, clock } = await paymentsLedger();
    const { token } = await ledger.issue({ tools: ['pay'], expiresAt: clock.now() + hour, budget: { calls: 5, inputBytes: 1_000 }, approvals: { pay: true }, approvalTimeoutMs: 1_000 });
    const first = ledger.invoke(token, 'pay', { to: 'bob', amount: 1 });
    const [a] = await pendingOf(ledger);
    await ledger.approve(a!.approvalId, { by: 'alice' });
    await first;
    await expect(ledger.approve(a!.approvalId, { by: 'bob' })).resolves.toEqual({ status: 'refused', reason: 'approval_resolved' });
    await expect(ledger.deny(a!.approvalId, { by: 'bob' })).resolves.toEqual({ status: 'refused', reason: 'approval_resolved' });
    await expect(ledger.approve('a_forged', { by: 'bob' })).resolves.toEqual({ status: 'refused', reason: 'unknown_approval' });
    void ledger.invoke(token, 'pay', { to: 'bob', amount: 2 });
    const [b] = await pendingOf(ledger);
    clock.advance(1_000);
    await expect(ledger.approve(b!.approvalId, { by: 'alice' })).resolves.toEqual({ status: 'refused', reason: 'approval_expired' });
    expect(ofType(ledger.events(), 'approval.resolved')).toHaveLength(1);
  });

  it('the deadline passing rejects the call approval_timeout and releases its reservation', async () => {
    const { ledger, clock, timers, paid } = await paymentsLedger();
    const { grantId, token } = await ledger.issue({ tools: ['pay'], expiresAt: clock.now() + hour, budget: { calls: 5, inputBytes: 1_000 }, approvals: { pay: true }, approvalTimeoutMs: 5_000 });
    const outcome = ledger.invoke(token, 'pay', { to: 'bob', amount: 1 });
    await pendingOf(ledger);
    clock.advance(4_999);
    timers.fire(); // early: the timer waits again
    await settle();
    expect(ledger.pendingApprovals()).toHaveLength(1);
    clock.advance(1);
    timers.fire();
    await expect(outcome).resolves.toMatchObject({ status: 'rejected', reason: 'approval_timeout' });
    expect(paid).toEqual([]);
    expect(ledger.usage(grantId).calls.used).toBe(0);
    const [timedOut] = ofType(ledger.events(), 'approval.resolved');
    expect(timedOut).toMatchObject({ outcome: 'timed_out', at: clock.now() });
    expect(timedOut!.by).toBeUndefined();
    expect(verify(ledger.events()).ok).toBe(true);
  });

  it('the wait never outlives the grant: the deadline is capped by the expiry', async () => {
    const { ledger, clock } = await paymentsLedger();
    const { token } = await ledger.issue({ tools: ['pay'], expiresAt: clock.now() + 2_000, budget: { calls: 5, inputBytes: 1_000 }, approvals: { pay: true }, approvalTimeoutMs: 60_000 });
    void ledger.invoke(token, 'pay', { to: 'bob', amount: 1 });
    const [pending] = await pendingOf(ledger);
    expect(pending!.deadline).toBe(clock.now() + 2_000);
  });

  it('every other check comes first: a spent budget or an unpermitted argument is rejected without asking anyone', async () => {
    const { ledger, clock } = await paymentsLedger();
    const { token } = await ledger.issue({ tools: ['pay'], args: { pay: { properties: { amount: { maximum: 500 } } } }, expiresAt: clock.now() + hour, budget: { calls: 0, inputBytes: 1_000 }, approvals: { pay: true } });
    await expect(ledger.invoke(token, 'pay', { to: 'bob', amount: 501 })).resolves.toMatchObject({ reason: 'argument_not_permitted' });
    await expect(ledger.invoke(token, 'pay', { to: 'bob', amount: 1 })).resolves.toMatchObject({ reason: 'call_budget_exhausted' });
    expect(ledger.pendingApprovals()).toEqual([]);
  });

  it('revoking an ancestor releases a child call that waits: the invoke is rejected revoked and the budget comes back', async () => {
    const { ledger, clock, paid } = await paymentsLedger();
    const root = await ledger.issue({ tools: ['pay'], expiresAt: clock.now() + hour, budget: { calls: 5, inputBytes: 1_000 } });
    const child = await ledger.attenuate(root.token, { approvals: { pay: true } });
    if (child.status !== 'issued') throw new Error('attenuate refused');
    const outcome = ledger.invoke(child.token, 'pay', { to: 'bob', amount: 1 });
    const [pending] = await pendingOf(ledger);
    expect(ledger.usage(root.grantId).calls.used).toBe(1);
    await ledger.revoke(root.grantId);
    await expect(outcome).resolves.toMatchObject({ status: 'rejected', reason: 'revoked' });
    expect(ledger.pendingApprovals()).toEqual([]);
    expect(ledger.usage(root.grantId).calls.used).toBe(0);
    await expect(ledger.approve(pending!.approvalId, { by: 'alice' })).resolves.toEqual({ status: 'refused', reason: 'approval_resolved' });
    expect(paid).toEqual([]);
    expect(verify(ledger.events()).ok).toBe(true);
    expect(replay(ledger.events())).toEqual(ledger.state());
  });

  it("a child may add approval rules but never drops an ancestor's: the chain's rule is the union", async () => {
    const { ledger, clock } = await paymentsLedger();
    const root = await ledger.issue({ tools: ['pay', 'balance'], expiresAt: clock.now() + hour, budget: { calls: 5, inputBytes: 1_000 }, approvals: { pay: true } });
    const child = await ledger.attenuate(root.token, { approvals: { balance: true } });
    if (child.status !== 'issued') throw new Error('attenuate refused');
    void ledger.invoke(child.token, 'pay', { to: 'bob', amount: 1 });
    void ledger.invoke(child.token, 'balance', {});
    const pending = await pendingOf(ledger, 2);
    expect(pending.map((p) => p.tool).sort()).toEqual(['balance', 'pay']);
    await expect(ledger.invoke(root.token, 'balance', {})).resolves.toMatchObject({ status: 'completed' });
  });

  it('a child may not wait longer than its parent allows', async () => {
    const { ledger, clock } = await paymentsLedger();
    const root = await ledger.issue({ tools: ['pay'], expiresAt: clock.now() + hour, budget: { calls: 5, inputBytes: 1_000 }, approvalTimeoutMs: 1_000 });
    await expect(ledger.attenuate(root.token, { approvalTimeoutMs: 2_000 })).resolves.toMatchObject({ status: 'rejected', reason: 'attenuation_widens' });
    await expect(ledger.attenuate(root.token, { approvalTimeoutMs: 500 })).resolves.toMatchObject({ status: 'issued' });
  });

  it('issue and approve fail loudly on malformed host input', async () => {
    const { ledger, clock } = await paymentsLedger();
    const base = { tools: ['pay'], expiresAt: clock.now() + hour, budget: { calls: 5, inputBytes: 1_000 } };
    await expect(ledger.issue({ ...base, approvals: { balance: true } })).rejects.toThrow(/approvals names tool "balance"/);
    await expect(ledger.issue({ ...base, approvals: { pay: { properties: { amount: { frobnicate: 1 } } } } })).rejects.toThrow(/approvals\["pay"\] does not compile/);
    await expect(ledger.issue({ ...base, approvals: { pay: { properties: { cents: { minimum: 1 } } } } })).rejects.toThrow(/names property "cents"/);
    await expect(ledger.issue({ ...base, approvalTimeoutMs: 0 })).rejects.toThrow(/approvalTimeoutMs/);
    await expect(ledger.approve('a_x', { by: '' })).rejects.toThrow(TypeError);
    await expect(ledger.deny('a_x', { by: 'alice', reason: 'x'.repeat(2_001) })).rejects.toThrow(TypeError);
  });

  it('an agent may not hand itself a rule that does not compile or is not a rule', async () => {
    const { ledger, clock } = await paymentsLedger();
    const root = await ledger.issue({ tools: ['pay'], expiresAt: clock.now() + hour, budget: { calls: 5, inputBytes: 1_000 } });
    await expect(ledger.attenuate(root.token, { approvals: { pay: { properties: { to: { frobnicate: true } } } } })).resolves.toMatchObject({ status: 'rejected', reason: 'attenuation_invalid' });
    await expect(ledger.attenuate(root.token, { approvals: { pay: 'yes' } as never })).resolves.toMatchObject({ status: 'rejected', reason: 'attenuation_invalid' });
  });

  it('approvals$ streams requests and resolutions; the waiting event never holds an argument value', async () => {
    const { ledger, clock } = await paymentsLedger();
    const seen: string[] = [];
    ledger.approvals$.subscribe((e) => seen.push(e.type));
    const { token } = await ledger.issue({ tools: ['pay'], expiresAt: clock.now() + hour, budget: { calls: 5, inputBytes: 1_000 }, approvals: { pay: true } });
    const outcome = ledger.invoke(token, 'pay', { to: 'secret-payee-xyz', amount: 77 });
    const [pending] = await pendingOf(ledger);
    await ledger.approve(pending!.approvalId, { by: 'alice' });
    await outcome;
    expect(seen).toEqual(['approval.requested', 'approval.resolved']);
    expect(JSON.stringify(ledger.events())).not.toContain('secret-payee-xyz');
    expect(JSON.stringify(ledger.events())).not.toContain(token);
  });
});

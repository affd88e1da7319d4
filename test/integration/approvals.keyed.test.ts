import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { replay, sqliteStore, verify, type EventOf, type Ledger, type LedgerEvent } from '../../src';
import { sealEvent } from '../../src/domain/chain';
import { hour, paymentsLedger, pendingOf, settle } from '../support/approvals';
import { closeLedgers } from '../support/approvals';

afterEach(closeLedgers);

const ofType = <T extends LedgerEvent['type']>(events: readonly LedgerEvent[], type: T) => events.filter((e): e is EventOf<T> => e.type === type);
const payment = { to: 'bob', amount: 500 };

/** Waits until the ledger has logged a retry's `call.replayed` (the retry's invoke itself waits on). */
async function replayed(ledger: Ledger): Promise<void> {
  for (let i = 0; i < 200 && !ledger.events().some((e) => e.type === 'call.replayed'); i++) await settle();
  expect(ledger.events().some((e) => e.type === 'call.replayed')).toBe(true);
}

/** A ledger whose every payment asks a person, and a first payment keyed `order-17`, waiting. */
async function waitingPayment() {
  const { ledger, paid, clock } = await paymentsLedger();
  const { token, grantId } = await ledger.issue({ tools: ['pay'], expiresAt: clock.now() + hour, budget: { calls: 5, inputBytes: 1_000 }, approvals: { pay: true } });
  const first = ledger.invoke(token, 'pay', payment, { idempotencyKey: 'order-17' });
  const [pending] = await pendingOf(ledger);
  return { ledger, paid, token, grantId, first, pending: pending! };
}

describe('approvals with idempotency keys: a retry while the call waits replays it, never asks again', () => {
  it('binds the key when the call starts waiting: a retry replays it, and no second person is asked', async () => {
    const { ledger, token, grantId, first, pending } = await waitingPayment();
    const retry = ledger.invoke(token, 'pay', payment, { idempotencyKey: 'order-17' });
    await replayed(ledger);
    expect(ledger.pendingApprovals()).toHaveLength(1);
    expect(ledger.usage(grantId).calls.used).toBe(1); // the retry reserved nothing
    expect(ofType(ledger.events(), 'approval.requested')[0]?.idempotency).toMatchObject({ keyDigest: expect.stringMatching(/^[0-9a-f]{64}$/) });
    await ledger.deny(pending.approvalId, { by: 'alice' });
    await first;
    // Made here while the call waited, the retry waited for its end: the call failed, it never ran.
    await expect(retry).resolves.toMatchObject({ status: 'replayed', callId: pending.callId, replayed: true, settled: 'failed' });
  });

  it('runs an approved call once; a retry made while it waited gets its value, and so does one after', async () => {
    const { ledger, paid, token, first, pending } = await waitingPayment();
    const retry = ledger.invoke(token, 'pay', payment, { idempotencyKey: 'order-17' });
    await replayed(ledger);
    await ledger.approve(pending.approvalId, { by: 'alice' });
    await expect(first).resolves.toMatchObject({ status: 'completed', value: 'paid 500' });
    await expect(retry).resolves.toMatchObject({ status: 'completed', value: 'paid 500', replayed: true, callId: pending.callId });
    await expect(ledger.invoke(token, 'pay', payment, { idempotencyKey: 'order-17' })).resolves.toMatchObject({ status: 'completed', value: 'paid 500', replayed: true, callId: pending.callId });
    expect(paid).toEqual([500]);
    expect(verify(ledger.events()).ok).toBe(true);
    expect(replay(ledger.events())).toEqual(ledger.state());
  });

  it('refuses a retry with other arguments under the same key while the call waits (idempotency_conflict)', async () => {
    const { ledger, token, first, pending } = await waitingPayment();
    await expect(ledger.invoke(token, 'pay', { to: 'mallory', amount: 500 }, { idempotencyKey: 'order-17' })).resolves.toMatchObject({ status: 'rejected', reason: 'idempotency_conflict' });
    expect(ledger.pendingApprovals()).toHaveLength(1);
    await ledger.deny(pending.approvalId, { by: 'alice' });
    await first;
  });

  it('a retry after a denial learns the call failed and does not ask again', async () => {
    const { ledger, paid, token, first, pending } = await waitingPayment();
    await ledger.deny(pending.approvalId, { by: 'alice' });
    await expect(first).resolves.toMatchObject({ status: 'rejected', reason: 'approval_denied' });
    await expect(ledger.invoke(token, 'pay', payment, { idempotencyKey: 'order-17' })).resolves.toMatchObject({ status: 'replayed', settled: 'failed', callId: pending.callId });
    expect(ledger.pendingApprovals()).toEqual([]);
    expect(paid).toEqual([]);
    expect(verify(ledger.events()).ok).toBe(true);
  });

  it('a retry after a revocation released the wait is refused revoked, like any call on a revoked grant', async () => {
    const { ledger, token, grantId, first } = await waitingPayment();
    await ledger.revoke(grantId);
    await expect(first).resolves.toMatchObject({ status: 'rejected', reason: 'revoked' });
    await expect(ledger.invoke(token, 'pay', payment, { idempotencyKey: 'order-17' })).resolves.toMatchObject({ status: 'rejected', reason: 'revoked' });
    expect(verify(ledger.events()).ok).toBe(true);
    expect(replay(ledger.events())).toEqual(ledger.state());
  });

  it('keeps the waiting binding across a reopen: a retry from the next process replays the waiting call', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'atc-keyed-approval-'));
    const path = join(dir, 'ledger.sqlite');
    const writer = await paymentsLedger({ store: sqliteStore({ path }) });
    const { token } = await writer.ledger.issue({ tools: ['pay'], expiresAt: writer.clock.now() + hour, budget: { calls: 5, inputBytes: 1_000 }, approvals: { pay: true } });
    const first = writer.ledger.invoke(token, 'pay', payment, { idempotencyKey: 'order-17' });
    const [pending] = await pendingOf(writer.ledger);
    await writer.ledger.close();
    await first;
    const { ledger: reopened } = await paymentsLedger({ store: sqliteStore({ path }) });
    expect(reopened.pendingApprovals().map((p) => p.approvalId)).toEqual([pending.approvalId]);
    await expect(reopened.invoke(token, 'pay', payment, { idempotencyKey: 'order-17' })).resolves.toMatchObject({ status: 'replayed', settled: 'in_flight', callId: pending.callId });
    expect(reopened.pendingApprovals()).toHaveLength(1);
    await reopened.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('counts the waiting key against the bound on live keys from the request on', async () => {
    const { ledger, clock } = await paymentsLedger({ idempotencyKeysPerTreeMax: 1 });
    const { token } = await ledger.issue({ tools: ['pay'], expiresAt: clock.now() + hour, budget: { calls: 5, inputBytes: 1_000 }, approvals: { pay: true } });
    const first = ledger.invoke(token, 'pay', payment, { idempotencyKey: 'order-17' });
    const [pending] = await pendingOf(ledger);
    await expect(ledger.invoke(token, 'pay', payment, { idempotencyKey: 'order-18' })).resolves.toMatchObject({ status: 'rejected', reason: 'idempotency_keys_exhausted' });
    await ledger.deny(pending!.approvalId, { by: 'alice' });
    await first;
  });

  it('runs the key\'s time to live from the request: a retry after it has passed asks again', async () => {
    const { ledger, clock } = await paymentsLedger({ idempotencyTtlMs: 1_000 });
    const { token } = await ledger.issue({ tools: ['pay'], expiresAt: clock.now() + hour, budget: { calls: 5, inputBytes: 1_000 }, approvals: { pay: true } });
    const first = ledger.invoke(token, 'pay', payment, { idempotencyKey: 'order-17' });
    await pendingOf(ledger);
    clock.advance(1_000);
    const second = ledger.invoke(token, 'pay', payment, { idempotencyKey: 'order-17' });
    const waits = await pendingOf(ledger, 2);
    expect(ofType(ledger.events(), 'call.replayed')).toEqual([]);
    for (const wait of waits) await ledger.deny(wait.approvalId, { by: 'alice' });
    await Promise.all([first, second]);
  });

  it('verify refuses a log that asked a person twice for one key while the first call waited', async () => {
    const { ledger, token, first, pending } = await waitingPayment();
    const retry = ledger.invoke(token, 'pay', payment, { idempotencyKey: 'order-17' });
    await replayed(ledger);
    const events = ledger.events();
    expect(verify(events).ok).toBe(true);
    // The log as it would read had the retry asked again: a second wait for the same key.
    const replay = events[events.length - 1] as EventOf<'call.replayed'>;
    const asked = ofType(events, 'approval.requested')[0] as EventOf<'approval.requested'>;
    const { seq: _seq, at: _at, prevHash: _prev, hash: _hash, ...payload } = asked;
    const before = events[events.length - 2] as LedgerEvent;
    const forged = [...events.slice(0, -1), sealEvent({ ...payload, approvalId: 'second-ask', callId: replay.callId }, replay.at, before)];
    const result = verify(forged);
    expect(result.ok).toBe(false);
    await ledger.deny(pending.approvalId, { by: 'alice' });
    await Promise.all([first, retry]);
  });
});

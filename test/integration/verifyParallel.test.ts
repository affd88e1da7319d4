import * as path from 'node:path';
import type { LedgerEvent, verify as verifyFn, verifyParallel as verifyParallelFn } from '../../src';
import { manualClock, notesLedger } from '../support/fixtures';
import { closeLedgers, hour, paymentsLedger, pendingOf } from '../support/approvals';

afterEach(closeLedgers);

// The worker thread needs compiled JS, so both verifiers come from dist/ (built by `pretest`).
const dist = require(path.resolve(__dirname, '..', '../dist/src/index.js')) as { verify: typeof verifyFn; verifyParallel: typeof verifyParallelFn };

async function sampleLog(): Promise<LedgerEvent[]> {
  const clock = manualClock();
  const { ledger } = await notesLedger({ clock: clock.now });
  const { token, grantId } = await ledger.issue({ tools: ['notes.write'], resources: ['notes:/drafts/'], expiresAt: clock.now() + 60_000, budget: { calls: 6, inputBytes: 4096 } });
  for (let i = 0; i < 8; i++) await ledger.invoke(token, 'notes.write', { path: i === 3 ? 'etc/x' : `drafts/${i}`, text: 'hi' });
  await ledger.revoke(grantId);
  await ledger.invoke(token, 'notes.write', { path: 'drafts/z', text: 'hi' });
  await ledger.invoke('not-a-token', 'notes.write', { path: 'drafts/z', text: 'hi' });
  const events = ledger.events().slice();
  await ledger.close();
  return events;
}

const jsonl = (events: readonly unknown[]): string => events.map((e) => JSON.stringify(e)).join('\n') + '\n';
const parsed = (events: readonly unknown[]): unknown[] => events.map((e) => JSON.parse(JSON.stringify(e)) as unknown);

async function expectSameAsVerify(events: readonly unknown[], problemsMax?: number): Promise<void> {
  const options = problemsMax === undefined ? {} : { problemsMax };
  const parallel = await dist.verifyParallel(jsonl(events), options);
  expect(parallel).toEqual(dist.verify(parsed(events), options));
}

describe('verifyParallel', () => {
  it('accepts an untouched log, as verify does', async () => {
    const events = await sampleLog();
    const result = await dist.verifyParallel(Buffer.from(jsonl(events)));
    expect(result).toEqual({ ok: true, checked: events.length, problems: [] });
  });

  it('reports the same problems as verify for an edited decision (hash and decision problems at that event)', async () => {
    const events: Record<string, unknown>[] = (await sampleLog()).map((e) => ({ ...e }));
    const admitted = events.findIndex((e) => e.type === 'call.admitted');
    events[admitted] = { ...events[admitted], reserved: { calls: 1, inputBytes: 1 } };
    await expectSameAsVerify(events);
  });

  it('reports the same problems as verify for a dropped, a swapped and a re-hashed-but-wrong event', async () => {
    const events = await sampleLog();
    await expectSameAsVerify(events.filter((_, i) => i !== 4));
    const swapped = events.slice();
    [swapped[5], swapped[6]] = [swapped[6] as LedgerEvent, swapped[5] as LedgerEvent];
    await expectSameAsVerify(swapped);
    await expectSameAsVerify(events.map((e, i) => (i === 7 ? { ...e, hash: 'f'.repeat(64) } : e)));
  });

  it('falls back to verify, with the same result, when a line is malformed or not JSON', async () => {
    const events = await sampleLog();
    await expectSameAsVerify(events.map((e, i) => (i === 3 ? { ...e, seq: 'three' } : e)));
    const text = jsonl(events).replace(/\n/, '\n{not json\n');
    const expected = dist.verify([parsed(events)[0], '{not json', ...parsed(events).slice(1)]);
    expect(await dist.verifyParallel(text)).toEqual(expected);
  });

  it('reports a reused callId as verify does, also when the worker checks the whole log', async () => {
    const events: Record<string, unknown>[] = (await sampleLog()).map((e) => ({ ...e }));
    const decisions = events.map((e, i) => (e.type === 'call.admitted' || e.type === 'call.rejected' ? i : -1)).filter((i) => i >= 0);
    const [first, later] = [decisions[0] as number, decisions[3] as number];
    events[later] = { ...events[later], callId: events[first]?.callId };
    await expectSameAsVerify(events);
    expect((await dist.verifyParallel(jsonl(events))).problems.map((p) => p.code)).toContain('duplicate_call');
    for (const workerShare of [0, 0.5, 1]) expect(await dist.verifyParallel(jsonl(events), { workerShare })).toEqual(dist.verify(parsed(events)));
  });

  it('counts a wait for approval as a decision of its callId, as verify does, whatever share the worker checks', async () => {
    const { ledger, clock } = await paymentsLedger();
    const { token } = await ledger.issue({ tools: ['pay'], expiresAt: clock.now() + hour, budget: { calls: 5, inputBytes: 1_000 }, approvals: { pay: true } });
    const waiting = ledger.invoke(token, 'pay', { to: 'bob', amount: 5 });
    const [pending] = await pendingOf(ledger);
    await ledger.approve(pending!.approvalId, { by: 'alice' });
    await waiting;
    await ledger.invoke(token, 'balance', {});
    const events: Record<string, unknown>[] = ledger.events().map((e) => ({ ...e }));
    const later = events.findIndex((e) => e.type === 'call.rejected');
    events[later] = { ...events[later], callId: pending!.callId }; // the waiting call's id, reused
    expect(dist.verify(parsed(events)).problems.map((p) => p.code)).toContain('duplicate_call');
    for (const workerShare of [0, 0.5, 1]) expect(await dist.verifyParallel(jsonl(events), { workerShare })).toEqual(dist.verify(parsed(events)));
  });

  it('keeps verify\'s order and cap of problems', async () => {
    const events = (await sampleLog()).map((e) => ({ ...e, hash: '0'.repeat(64) }));
    await expectSameAsVerify(events, 3);
  });
});

describe('verifyParallel worker share', () => {
  it.each([0, 0.5, 0.9, 1])('gives verify\'s result whatever share of the log the worker checks (%p)', async (workerShare) => {
    const events = (await sampleLog()).map((e, i) => (i === 2 || i === 9 ? { ...e, hash: 'e'.repeat(64) } : e));
    const parallel = await dist.verifyParallel(jsonl(events), { workerShare });
    expect(parallel).toEqual(dist.verify(parsed(events)));
  });
});

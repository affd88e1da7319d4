import type { LedgerEvent } from '../../src/domain/events';
import { verify } from '../../src/verification/verify';
import { verifyWithWorker, type CheckWorker, type CheckWorkerInput } from '../../src/verification/verifyParallel';
import { checkShapesAndHashes, type WorkerReport } from '../../src/verification/workerChecks';
import { admit, given, issueCommand, registerNotes, T0 } from '../support/given';
import { reseal } from '../support/sealedLog';

// verifyParallel's own logic, with a worker that runs the worker thread's checks in-process (the
// real thread, verifyThread.ts, is exercised from dist/ by verify.delegation and the hostile-log
// regressions). Whatever the split, the result must equal the sequential `verify` of the same lines.

const log = (): LedgerEvent[] => given(registerNotes, issueCommand({ budget: { calls: 9, inputBytes: 900 } }), admit(), admit({ callId: 'c2' }), admit({ callId: 'c3' }), { type: 'settle', at: T0 + 2, callId: 'c1', outcome: 'completed', refund: false }).events;
const lines = (events: readonly object[]): string => events.map((e) => JSON.stringify(e)).join('\n');

interface Started {
  readonly start: (input: CheckWorkerInput) => CheckWorker;
  readonly inputs: CheckWorkerInput[];
}
function inProcess(report: (input: CheckWorkerInput) => WorkerReport | undefined = (i) => checkShapesAndHashes(i.bytes, i.byteEnd, i.duplicates)): Started {
  const started: Started = {
    inputs: [],
    start: (input) => {
      started.inputs.push(input);
      return { report: Promise.resolve(report(input)), terminate: async () => undefined };
    },
  };
  return started;
}
const sequentially = (text: string) => verify(text.split('\n').map((l) => JSON.parse(l) as unknown));

describe('verifyWithWorker', () => {
  it.each([0, 0.5, 0.9, 1])('accepts a clean log with the worker checking a %s share', async (workerShare) => {
    const text = lines(log());
    expect(await verifyWithWorker(text, { workerShare }, inProcess().start)).toEqual({ ok: true, checked: 6, problems: [] });
  });

  it.each([0.5, 1])('reports a hash the worker finds, with its seq, as verify does (share %s)', async (workerShare) => {
    const events = log();
    events[1] = { ...(events[1] as LedgerEvent), at: T0 - 1 } as LedgerEvent; // content changed, hash kept
    const text = lines(events);
    const result = await verifyWithWorker(text, { workerShare }, inProcess().start);
    expect(result).toEqual(sequentially(text));
    expect(result.problems).toContainEqual(expect.objectContaining({ seq: 2, code: 'hash' }));
  });

  it.each([0.5, 1])('reports a reused callId, with its seq, as verify does (share %s)', async (workerShare) => {
    const events = log();
    events[3] = { ...(events[3] as LedgerEvent), callId: 'c1' } as LedgerEvent;
    const text = lines(reseal(events));
    const result = await verifyWithWorker(text, { workerShare }, inProcess().start);
    expect(result).toEqual(sequentially(text));
    expect(result.problems).toContainEqual(expect.objectContaining({ seq: 4, code: 'duplicate_call' }));
  });

  it('asks the worker for callId reuse only when its share is the whole log', async () => {
    const whole = inProcess();
    await verifyWithWorker(lines(log()), { workerShare: 1 }, whole.start);
    const part = inProcess();
    await verifyWithWorker(lines(log()), { workerShare: 0.5 }, part.start);
    expect(whole.inputs.map((i) => i.duplicates)).toEqual([true]);
    expect(part.inputs.map((i) => i.duplicates)).toEqual([false]);
    expect(part.inputs[0]?.byteEnd).toBeLessThan(lines(log()).length);
  });

  it('keeps problemsMax problems, in log order', async () => {
    const events = log().map((e, i) => (i === 0 ? e : ({ ...e, at: T0 - 5 } as LedgerEvent)));
    const text = lines(events);
    const result = await verifyWithWorker(text, { workerShare: 1, problemsMax: 2 }, inProcess().start);
    expect(result).toEqual(verify(events, { problemsMax: 2 }));
    expect(result.problems).toHaveLength(2);
    expect(result.ok).toBe(false);
  });

  it('runs the sequential verify when no worker starts, when it fails, and when it finds a malformed event', async () => {
    const events = log();
    events[2] = { ...(events[2] as LedgerEvent), at: T0 - 1 } as LedgerEvent;
    const text = lines(events);
    const expected = sequentially(text);
    expect(await verifyWithWorker(text, {}, () => undefined)).toEqual(expected);
    expect(await verifyWithWorker(text, {}, inProcess(() => undefined).start)).toEqual(expected);
    expect(await verifyWithWorker(text, {}, inProcess(() => ({ malformed: true, hashMismatches: [], duplicateCalls: [] })).start)).toEqual(expected);
  });

  it('refuses a workerShare outside [0, 1]', async () => {
    await expect(verifyWithWorker(lines(log()), { workerShare: 1.5 }, inProcess().start)).rejects.toThrow(new RangeError('workerShare must be between 0 and 1'));
    await expect(verifyWithWorker(lines(log()), { workerShare: Number.NaN }, inProcess().start)).rejects.toThrow(RangeError);
  });

  it('hands what is not text or bytes to verify, which reports it', async () => {
    expect(await verifyWithWorker(42 as never, {}, inProcess().start)).toEqual(verify(42 as never));
  });

  it('accepts the log as bytes', async () => {
    expect(await verifyWithWorker(new TextEncoder().encode(lines(log())), {}, inProcess().start)).toEqual({ ok: true, checked: 6, problems: [] });
  });
});

describe('checkShapesAndHashes (the worker thread’s checks)', () => {
  const bytes = (text: string) => new TextEncoder().encode(text);
  it('lists the indices of events whose hash does not match their content', () => {
    const events = log();
    events[4] = { ...(events[4] as LedgerEvent), at: T0 - 1 } as LedgerEvent;
    const text = bytes(lines(events));
    expect(checkShapesAndHashes(text, text.byteLength, false)).toEqual({ malformed: false, hashMismatches: [4], duplicateCalls: [] });
  });
  it('lists reused callIds only when asked, by index', () => {
    const events = log();
    events[3] = { ...(events[3] as LedgerEvent), callId: 'c1' } as LedgerEvent;
    const text = bytes(lines(reseal(events)));
    expect(checkShapesAndHashes(text, text.byteLength, true).duplicateCalls).toEqual([3]);
    expect(checkShapesAndHashes(text, text.byteLength, false).duplicateCalls).toEqual([]);
  });
  it('stops at the end of its share', () => {
    const events = log();
    events[5] = { ...(events[5] as LedgerEvent), at: T0 - 1 } as LedgerEvent;
    const text = lines(events);
    const end = text.lastIndexOf('\n');
    expect(checkShapesAndHashes(bytes(text), end, false).hashMismatches).toEqual([]);
  });
  it('reports a malformed event instead of checking on', () => {
    const text = bytes(lines([{ seq: 1, type: 'nonsense' }, ...log()]));
    expect(checkShapesAndHashes(text, text.byteLength, true)).toEqual({ malformed: true, hashMismatches: [], duplicateCalls: [] });
  });
});

describe('verifyWithWorker: edges', () => {
  it('refuses a negative workerShare', async () => {
    await expect(verifyWithWorker(lines(log()), { workerShare: -0.1 }, inProcess().start)).rejects.toThrow(new RangeError('workerShare must be between 0 and 1'));
  });

  it('reports the worker’s hash problem and a line that is null in its own share, as verify does', async () => {
    const events: unknown[] = log();
    events[1] = { ...(events[1] as LedgerEvent), at: T0 - 1 }; // content changed, hash kept
    const text = `${lines(events as object[])}\nnull`;
    const result = await verifyWithWorker(text, { workerShare: 0.5 }, inProcess().start);
    expect(result).toEqual(sequentially(text));
    expect(result.problems.map((p) => p.code)).toEqual(['hash', 'malformed']);
  });
});

describe('checkShapesAndHashes: more', () => {
  const bytes = (text: string) => new TextEncoder().encode(text);
  const key = { keyDigest: 'c'.repeat(64), argsDigest: 'b'.repeat(64), expiresAt: T0 + 50_000, keysMax: 10 };

  it('counts a rejection and a replay as decisions of their callId', () => {
    const rejected = given(registerNotes, issueCommand(), admit(), admit({ grantId: undefined })).events;
    const replayed = given(registerNotes, issueCommand(), admit({ idempotency: key }), { type: 'settle', at: T0 + 1, callId: 'c1', outcome: 'completed', refund: false }, admit({ idempotency: key, at: T0 + 2 })).events;
    expect(rejected[3]?.type).toBe('call.rejected');
    expect(replayed[4]?.type).toBe('call.replayed');
    for (const [events, index] of [[rejected, 3], [replayed, 4]] as const) {
      const text = bytes(lines(events));
      expect(checkShapesAndHashes(text, text.byteLength, true).duplicateCalls).toEqual([index]);
    }
  });

  it('reports a well-shaped event it cannot hash (a number JSON reads as Infinity) as malformed', () => {
    const text = bytes(lines(log()).replace('"type":"object"', '"type":"object","x":1e400'));
    expect(checkShapesAndHashes(text, text.byteLength, true)).toEqual({ malformed: true, hashMismatches: [], duplicateCalls: [] });
  });
});

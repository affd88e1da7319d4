import { existsSync } from 'node:fs';
import { verify } from '../../src';
import { raceWorkerScript, runConcurrency, type ConcurrencyRun } from '../../experiments/reproduce/runConcurrency';

// The workers load the compiled worker from dist/ (built by `pretest`).
describe.each(['calls', 'bytes'] as const)('8 worker threads × 8 attempts against a %s budget admitting 7', (kind) => {
  let run: ConcurrencyRun;
  beforeAll(async () => {
    expect(existsSync(raceWorkerScript())).toBe(true);
    run = await runConcurrency(kind);
  });

  it('admits exactly 7 and rejects the other 57 for that budget', () => {
    const admitted = run.record.attempts.filter((a) => a.outcome === 'admitted');
    const rejected = run.record.attempts.filter((a) => a.outcome === 'rejected');
    expect([admitted.length, rejected.length]).toEqual([7, 57]);
    const reason = kind === 'calls' ? 'call_budget_exhausted' : 'byte_budget_exhausted';
    expect(new Set(rejected.map((a) => a.reason))).toEqual(new Set([reason]));
  });

  it('records 8 attempts from each of the 8 threads', () => {
    const perWorker = new Map<number, number>();
    for (const a of run.record.attempts) perWorker.set(a.worker, (perWorker.get(a.worker) ?? 0) + 1);
    expect([...perWorker.entries()].sort(([a], [b]) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7].map((w) => [w, 8]));
  });

  it("matches the store's effects to the admissions one for one", () => {
    const admitted = run.record.attempts.filter((a) => a.outcome === 'admitted').map((a) => a.callId).sort();
    expect([...run.record.effectCallIds].sort()).toEqual(admitted);
    expect(run.record.store.notesAfter - run.record.store.notesBefore).toBe(7);
  });

  it('logs 64 decisions that verify, the admissions reserving within the budget', () => {
    expect(verify(run.log).ok).toBe(true);
    const admitted = run.log.filter((e) => e.type === 'call.admitted');
    expect(run.log.filter((e) => e.type === 'call.rejected')).toHaveLength(57);
    const reserved = admitted.reduce((sum, e) => sum + (e.type === 'call.admitted' ? e.reserved.inputBytes : 0), 0);
    expect(reserved).toBeLessThanOrEqual(run.record.budget.inputBytes);
    expect(admitted.length).toBeLessThanOrEqual(run.record.budget.calls);
  });
});

describe('arguments from another realm', () => {
  // Regression: a plain JSON object built in another realm (a `vm` context; a worker message under
  // jest's sandbox) has that realm's Object.prototype; it used to be refused as not plain JSON.
  it('admits plain-JSON arguments created in another realm', async () => {
    const vm = await import('node:vm');
    const { createLedger } = await import('../../src');
    const ledger = createLedger();
    await ledger.registerTool({ name: 'echo', inputSchema: { type: 'object', properties: { a: { type: 'number' } } }, run: () => 'ok' });
    const { token } = await ledger.issue({ tools: ['echo'], expiresAt: Date.now() + 60_000, budget: { calls: 1, inputBytes: 100 } });
    const outcome = await ledger.invoke(token, 'echo', vm.runInNewContext('({ a: 1 })'));
    await ledger.close();
    expect(outcome.status).toBe('completed');
  });
});

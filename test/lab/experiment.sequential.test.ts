import { rejectReasons, verify } from '../../src';
import { runSequential, type SequentialRun } from '../../experiments/reproduce/runSequential';
import { sequentialCases } from '../../src/evidence/sequentialCases';

describe('the 31 sequential cases', () => {
  let run: SequentialRun;
  beforeAll(async () => {
    run = await runSequential(1_800_000_000_000);
  });

  it('has 5 allowed controls and 26 adversarial or budget-exhausted cases', () => {
    expect(sequentialCases.filter((c) => c.kind === 'allowed')).toHaveLength(5);
    expect(sequentialCases.filter((c) => c.kind === 'adversarial')).toHaveLength(26);
    expect(new Set(sequentialCases.map((c) => c.name)).size).toBe(31);
  });

  // Not reachable by one call on its own: ledger_unavailable needs a failing store; approval_denied
  // and approval_timeout need a person's answer or a deadline passing while the call waits
  // (test/property/approvals.test.ts and test/integration/approvals.test.ts cover them).
  const needsAnotherParty = new Set(['ledger_unavailable', 'approval_denied', 'approval_timeout']);

  it('covers every reject reason a sequential call can reach on its own', () => {
    const covered = new Set(sequentialCases.map((c) => c.expected.reason).filter((r) => r !== undefined));
    expect([...covered].sort()).toEqual(rejectReasons.filter((r) => !needsAnotherParty.has(r)).sort());
  });

  it.each(sequentialCases.map((c, i) => [c.name, i] as const))('%s is decided as expected', (_name, i) => {
    const record = run.cases[i];
    const definition = sequentialCases[i];
    expect(record?.observed.outcome).toBe(definition?.expected.outcome);
    expect(record?.observed.reason).toBe(definition?.expected.reason);
  });

  it('leaves the notes store untouched and runs no tool for every rejected case', () => {
    const rejected = run.cases.filter((c) => c.observed.outcome === 'rejected');
    expect(rejected).toHaveLength(26);
    for (const c of rejected) {
      expect({ name: c.name, toolRuns: c.toolRuns, after: c.storeDigestAfter }).toEqual({ name: c.name, toolRuns: 0, after: c.storeDigestBefore });
    }
  });

  it('runs the tool of each allowed control once, and the write control changes the store', () => {
    const allowed = run.cases.filter((c) => c.kind === 'allowed');
    expect(allowed.map((c) => [c.observed.status, c.toolRuns])).toEqual([['completed', 1], ['completed', 1], ['completed', 1], ['completed', 1], ['completed', 1]]);
    const write = allowed.find((c) => c.name === 'allowed-write');
    expect(write?.storeDigestAfter).not.toBe(write?.storeDigestBefore);
  });

  it('writes a log that verifies, with one decision per case', () => {
    expect(verify(run.log)).toEqual({ ok: true, checked: run.log.length, problems: [] });
    const decisions = run.log.filter((e) => e.type === 'call.admitted' || e.type === 'call.rejected');
    expect(decisions.map((e) => (e as { callId: string }).callId)).toEqual(run.cases.map((c) => c.observed.callId));
  });
});

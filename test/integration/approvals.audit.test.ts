import { createLedger, sqliteStore, type Ledger } from '../../src';
import { runAudit } from '../../src/cli/commands/audit';
import { captureIo, sqliteTempDir } from '../support/sqliteFiles';
import { manualClock } from '../support/fixtures';
import { hour, manualTimers, pendingOf } from '../support/approvals';

/**
 * Five waits on `pay`, one per outcome in log order: approved by alice (then completed), denied by
 * bob, timed out, revoked while waiting, and one still pending.
 */
async function oneWaitOfEachOutcome(ledger: Ledger, clock: { now: () => number; advance: (ms: number) => void }): Promise<void> {
    await ledger.registerTool({ name: 'pay', inputSchema: { type: 'object' }, run: async () => 'ok' });
    const rules = { tools: ['pay'], expiresAt: clock.now() + hour, budget: { calls: 10, inputBytes: 1_000 }, approvals: { pay: true as const }, approvalTimeoutMs: 1_000 };
    const a = await ledger.issue(rules);
    const b = await ledger.issue(rules);
    const outcomes = [ledger.invoke(a.token, 'pay', {}), ledger.invoke(a.token, 'pay', {}), ledger.invoke(a.token, 'pay', {}), ledger.invoke(b.token, 'pay', {})];
    const [approved, denied] = await pendingOf(ledger, 4);
    await ledger.approve(approved!.approvalId, { by: 'alice' });
    await ledger.deny(denied!.approvalId, { by: 'bob' });
    await ledger.revoke(b.grantId);
    clock.advance(1_000);
    await ledger.runDueTimeouts();
    await Promise.all(outcomes);
    void ledger.invoke(a.token, 'pay', {});
    await pendingOf(ledger, 1);
}

describe('atc audit shows pending and resolved approvals', () => {
  const tmp = sqliteTempDir();
  afterAll(() => tmp.cleanup());

  it('one `asked` row per wait: approved (with who and how the call ended), denied, timed out, revoked, pending', async () => {
    const file = tmp.file('audit.sqlite');
    const clock = manualClock();
    const ledger = createLedger({ clock: clock.now, store: sqliteStore({ path: file }), setTimer: manualTimers().setTimer });
    await oneWaitOfEachOutcome(ledger, clock);
    const io = captureIo();
    expect(await runAudit([file, '--json'], io)).toBe(0);
    const asked = io.stdout.map((l) => JSON.parse(l) as { decision: string; approval?: string; by?: string; outcome?: string }).filter((r) => r.decision === 'asked');
    expect(asked.map(({ approval, by, outcome }) => ({ approval, by, outcome }))).toEqual([
      { approval: 'approved', by: 'alice', outcome: 'completed' },
      { approval: 'denied', by: 'bob', outcome: undefined },
      { approval: 'timed out', by: undefined, outcome: undefined },
      { approval: 'revoked', by: undefined, outcome: undefined },
      { approval: 'pending', by: undefined, outcome: undefined },
    ]);
    const table = captureIo();
    await runAudit([file], table);
    expect(table.stdout.join('\n')).toContain('approval denied by bob');
    await ledger.close();
  });
});

describe('the audit page shows pending and resolved approvals', () => {
  it('an `asked` row per wait, its outcome read from the log (waiting, approved by, denied by, timed out, revoked)', async () => {
    const { AuditModel } = await import('../../src/web/page/auditModel');
    const { matchesFilter } = await import('../../src/web/page/filters');
    const clock = manualClock();
    const ledger = createLedger({ clock: clock.now, setTimer: manualTimers().setTimer });
    try {
      await oneWaitOfEachOutcome(ledger, clock);
      const model = new AuditModel();
      for (const e of ledger.events()) model.add(e.seq, e as unknown as Record<string, unknown>, JSON.stringify(e));
      const asked = model.decisions.filter((d) => matchesFilter(d, { decision: 'asked' }));
      expect(asked.map((d) => model.outcomeOf(d))).toEqual(['approved by alice, completed', 'denied by bob', 'approval timed out', 'revoked while waiting', 'waiting for approval']);
    } finally {
      await ledger.close();
    }
  });
});

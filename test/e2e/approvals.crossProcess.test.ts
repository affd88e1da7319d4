import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { createLedger, openLedger, sqliteStore, verify, type Ledger, type PendingApprovalView } from '../../src';
import { postgresStore } from '../../src/postgres';
import { sqliteTempDir } from '../support/sqliteFiles';
import { describePg, freshSchema, url } from '../support/pgTest';
import { hour, paySchema, pendingOf } from '../support/approvals';

// `atc approve` / `atc deny` / `atc approvals` in real child processes on the log a waiting invoke
// shares: the waiting process folds the decision and runs (or rejects) the call.

const main = path.join(__dirname, '..', '..', 'dist', 'src', 'cli', 'main.js');
const run = promisify(execFile);

async function atc(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [main, ...args], { timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

async function paymentsOn(ledger: Ledger, paid: number[]): Promise<string> {
  await ledger.registerTool({ name: 'pay', inputSchema: paySchema, run: async (args: { to: string; amount: number }) => { paid.push(args.amount); return 'ok'; } });
  const { token } = await ledger.issue({ tools: ['pay'], expiresAt: Date.now() + hour, budget: { calls: 5, inputBytes: 1_000 }, approvals: { pay: true } });
  return token;
}

/** The same scenario against any shared log: list, approve, deny, and a second use refused. */
async function decideFromOtherProcesses(ledger: Ledger, target: string): Promise<void> {
  const paid: number[] = [];
  const token = await paymentsOn(ledger, paid);
  const first = ledger.invoke(token, 'pay', { to: 'bob', amount: 120 });
  const [pending] = await pendingOf(ledger);
  const listed = await atc(['approvals', '--ledger', target, '--json']);
  expect(listed.code).toBe(0);
  expect((JSON.parse(listed.stdout) as PendingApprovalView[]).map((p) => p.approvalId)).toEqual([pending!.approvalId]);
  expect(listed.stdout).not.toContain('bob');

  const approved = await atc(['approve', pending!.approvalId, '--ledger', target, '--by', 'alice', '--note', 'invoice 7']);
  expect(approved.code).toBe(0);
  await expect(first).resolves.toMatchObject({ status: 'completed', value: 'ok' });
  expect(paid).toEqual([120]);
  const again = await atc(['approve', pending!.approvalId, '--ledger', target, '--by', 'mallory']);
  expect(again.code).toBe(1);
  expect(again.stderr).toContain('approval_resolved');

  const second = ledger.invoke(token, 'pay', { to: 'eve', amount: 999 });
  const [next] = await pendingOf(ledger);
  const denied = await atc(['deny', next!.approvalId, '--ledger', target, '--by', 'alice', '--reason', 'unknown payee']);
  expect(denied.code).toBe(0);
  await expect(second).resolves.toMatchObject({ status: 'rejected', reason: 'approval_denied' });
  expect(paid).toEqual([120]);

  const resolved = ledger.events().filter((e) => e.type === 'approval.resolved');
  expect(resolved).toMatchObject([{ outcome: 'approved', by: 'alice', note: 'invoice 7' }, { outcome: 'denied', by: 'alice', note: 'unknown payee' }]);
  expect(verify(ledger.events()).ok).toBe(true);
}

describe('approvals decided by atc approve / atc deny in another process', () => {
  const tmp = sqliteTempDir();
  afterAll(() => tmp.cleanup());

  it('on a shared SQLite log', async () => {
    const file = tmp.file('approvals.sqlite');
    const ledger = createLedger({ store: sqliteStore({ path: file }) });
    try {
      await decideFromOtherProcesses(ledger, file);
    } finally {
      await ledger.close();
    }
  }, 90_000);

  it('refuses a malformed decision with exit 2 and an unknown id with exit 1', async () => {
    const file = tmp.file('refusals.sqlite');
    const ledger = createLedger({ store: sqliteStore({ path: file }) });
    await ledger.close();
    expect((await atc(['approve', 'a_nope', '--ledger', file])).code).toBe(2); // --by is required
    expect((await atc(['approve', 'a_nope', '--ledger', file, '--by', 'alice'])).code).toBe(1);
  }, 60_000);
});

describePg('approvals decided by atc approve / atc deny on PostgreSQL', () => {
  it('on a shared PostgreSQL log', async () => {
    const schema = freshSchema('approvals');
    const ledger = await openLedger({ store: postgresStore({ connectionString: url(), schema, catchUpIntervalMs: 50 }) });
    try {
      await decideFromOtherProcesses(ledger, `${url()}?schema=${schema}`);
    } finally {
      await ledger.close();
    }
  }, 90_000);
});

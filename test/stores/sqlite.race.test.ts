import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { Worker } from 'node:worker_threads';
import { createLedger, inputBytesOf, sqliteStore, verify, type LedgerEvent } from '../../src';
import { sqliteTempDir } from '../support/sqliteFiles';

// Participants load the built library (dist/), which `npm test` builds first.
const fixtures = path.join(__dirname, '..', 'fixtures');
const tmp = sqliteTempDir();
afterAll(() => tmp.cleanup());
const hour = 3_600_000;
const budgetCalls = 7;
const attemptsTotal = 64;

interface Plan {
  readonly tag: string;
  readonly attempts: number;
  readonly callsToken: string;
  readonly bytesToken: string;
}
interface Result {
  readonly outcomes: readonly { grant: 'calls' | 'bytes'; status: string; reason?: string }[];
  readonly runs: readonly string[];
}

/** A log with the tool and two grants: calls: 7, and a byte budget that fits exactly 7 calls. */
async function sharedLog(name: string): Promise<{ file: string; callsGrant: string; bytesGrant: string; tokens: { callsToken: string; bytesToken: string } }> {
  const file = tmp.file(name);
  const ledger = createLedger({ store: sqliteStore({ path: file }) });
  await ledger.registerTool({ name: 'notes.write', inputSchema: { type: 'object', properties: { path: { type: 'string' }, text: { type: 'string' } }, required: ['path', 'text'] }, run: () => null });
  const callBytes = inputBytesOf({ path: 'drafts/w0-00', text: 'x' });
  const calls = await ledger.issue({ tools: ['notes.write'], expiresAt: Date.now() + hour, budget: { calls: budgetCalls, inputBytes: 1_000_000 } });
  const bytes = await ledger.issue({ tools: ['notes.write'], expiresAt: Date.now() + hour, budget: { calls: 1_000, inputBytes: budgetCalls * callBytes } });
  await ledger.close();
  return { file, callsGrant: calls.grantId, bytesGrant: bytes.grantId, tokens: { callsToken: calls.token, bytesToken: bytes.token } };
}

function expectExactlySevenEach(results: readonly Result[]): void {
  const outcomes = results.flatMap((r) => r.outcomes);
  for (const [grant, reason] of [['calls', 'call_budget_exhausted'], ['bytes', 'byte_budget_exhausted']] as const) {
    const mine = outcomes.filter((o) => o.grant === grant);
    expect(mine).toHaveLength(attemptsTotal);
    expect(mine.filter((o) => o.status === 'completed')).toHaveLength(budgetCalls);
    expect(mine.filter((o) => o.status === 'rejected' && o.reason === reason)).toHaveLength(attemptsTotal - budgetCalls);
  }
  expect(results.flatMap((r) => r.runs)).toHaveLength(2 * budgetCalls);
}

function expectMergedLogVerifies(file: string, grants: readonly string[]): void {
  const store = sqliteStore({ path: file, verifyOnOpen: 'full', snapshotEvery: 0 });
  const events: LedgerEvent[] = Array.from(store.load());
  store.close();
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  expect(verify(events)).toMatchObject({ ok: true, problems: [] });
  for (const grantId of grants) {
    expect(events.filter((e) => e.type === 'call.admitted' && e.grantId === grantId)).toHaveLength(budgetCalls);
  }
}

describe('several writers sharing one SQLite file', () => {
  it('8 worker threads racing 64 attempts per grant admit exactly 7 on each, and the merged log verifies', async () => {
    const { file, callsGrant, bytesGrant, tokens } = await sharedLog('threads.sqlite');
    const gate = new SharedArrayBuffer(4);
    const threads = 8;
    const results = await new Promise<Result[]>((resolve, reject) => {
      const collected: Result[] = [];
      let ready = 0;
      const workers = Array.from({ length: threads }, (_, w) => {
        const plan: Plan = { tag: `w${w}`, attempts: attemptsTotal / threads, ...tokens };
        const worker = new Worker(path.join(fixtures, 'sqlite-race-worker.js'), { workerData: { file, plan, gate } });
        worker.on('error', reject);
        worker.on('message', (m: { ready?: true; result?: Result; error?: string }) => {
          if (m.error !== undefined) reject(new Error(m.error));
          if (m.ready === true && ++ready === threads) {
            const flag = new Int32Array(gate);
            Atomics.store(flag, 0, 1);
            Atomics.notify(flag, 0);
          }
          if (m.result !== undefined && collected.push(m.result) === threads) resolve(collected);
        });
        return worker;
      });
      void workers;
    });
    expectExactlySevenEach(results);
    expectMergedLogVerifies(file, [callsGrant, bytesGrant]);
  });

  it('4 child processes racing 64 attempts per grant admit exactly 7 on each, and the merged log verifies', async () => {
    const { file, callsGrant, bytesGrant, tokens } = await sharedLog('processes.sqlite');
    const processes = 4;
    const children = Array.from({ length: processes }, (_, p) => {
      const plan: Plan = { tag: `p${p}`, attempts: attemptsTotal / processes, ...tokens };
      const child = spawn(process.execPath, [path.join(fixtures, 'sqlite-race-child.js'), JSON.stringify({ file, plan })], { stdio: ['pipe', 'pipe', 'inherit'] });
      const lines = readline.createInterface({ input: child.stdout });
      const ready = new Promise<void>((resolve) => lines.once('line', () => resolve()));
      const result = new Promise<Result>((resolve, reject) => {
        lines.on('line', (line) => line !== 'ready' && resolve(JSON.parse(line) as Result));
        child.on('exit', (code) => code !== 0 && reject(new Error(`child ${p} exited with ${code}`)));
      });
      return { child, ready, result };
    });
    await Promise.all(children.map((c) => c.ready));
    for (const c of children) c.child.stdin.end('go\n'); // the go signal, once every process is ready
    const results = await Promise.all(children.map((c) => c.result));
    expectExactlySevenEach(results);
    expectMergedLogVerifies(file, [callsGrant, bytesGrant]);
  });
});

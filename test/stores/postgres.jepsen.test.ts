import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import type { Pool } from 'pg';
import { inputBytesOf, type LedgerEvent } from '../../src';
import { checkHistory, type Acknowledged } from '../support/historyChecker';
import { hour, pgLedger } from '../support/pgLedger';
import { adminPool, describePg, freshSchema, url } from '../support/pgTest';

// Call and byte budgets and a delegation tree (meter budgets have not landed yet).
// Clients load the built library (dist/), which `npm test` builds first.
const client = path.join(__dirname, '..', 'fixtures', 'pg-jepsen-client.js');
const processes = 8;
const attemptsPerProcess = 30;
const budgetCalls = 15;
const spendTool = { name: 'spend', inputSchema: { type: 'object', properties: { note: { type: 'string' } }, required: ['note'] }, run: async () => 'spent' };

interface Run {
  readonly acknowledged: Acknowledged[];
  readonly events: LedgerEvent[];
  readonly killedAfter: number;
  readonly treeRoot: string;
}

const treeRootCalls = 12;

/**
 * Shared grants on a fresh schema: a call budget, a byte budget that fits exactly `budgetCalls`
 * calls, and a delegation tree (root: 12 calls; children A and B: 8 each; A's child A1: 5) whose
 * leaves and inner node A are called, so the root's budget binds across branches.
 */
async function sharedGrants(schema: string): Promise<{ grants: { name: string; token: string }[]; treeRoot: string }> {
  const ledger = await pgLedger(schema);
  await ledger.registerTool(spendTool);
  const callBytes = inputBytesOf({ note: 'p0-000' });
  const calls = await ledger.issue({ tools: ['spend'], expiresAt: Date.now() + hour, budget: { calls: budgetCalls, inputBytes: 1_000_000 } });
  const bytes = await ledger.issue({ tools: ['spend'], expiresAt: Date.now() + hour, budget: { calls: 1_000, inputBytes: budgetCalls * callBytes } });
  const root = await ledger.issue({ tools: ['spend'], expiresAt: Date.now() + hour, budget: { calls: treeRootCalls, inputBytes: 1_000_000 } });
  const child = async (token: string, calls: number): Promise<{ token: string }> => {
    const outcome = await ledger.attenuate(token, { budget: { calls } });
    if (outcome.status !== 'issued') throw new Error(`attenuate refused: ${outcome.reason}`);
    return outcome;
  };
  const a = await child(root.token, 8);
  const a1 = await child(a.token, 5);
  const b = await child(root.token, 8);
  await ledger.close();
  return {
    grants: [
      { name: 'calls', token: calls.token },
      { name: 'bytes', token: bytes.token },
      { name: 'tree-a', token: a.token },
      { name: 'tree-a1', token: a1.token },
      { name: 'tree-b', token: b.token },
    ],
    treeRoot: root.grantId,
  };
}

/** 8 client processes race; the last one is SIGKILLed after its third acknowledged outcome. */
async function race(admin: Pool, naive: boolean): Promise<Run> {
  const schema = freshSchema(naive ? 'naive' : 'jepsen');
  const { grants, treeRoot } = await sharedGrants(schema);
  const acknowledged: Acknowledged[] = [];
  const victim = processes - 1;
  const killAfter = 3;
  let killedAfter = 0;
  const children = Array.from({ length: processes }, (_, p) => {
    const plan = { url: url(), schema, naive, tag: `p${p}`, attempts: attemptsPerProcess, concurrency: 3, grants };
    const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [client, JSON.stringify(plan)], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const lines = readline.createInterface({ input: child.stdout });
    let mine = 0;
    const ready = new Promise<void>((resolve) => lines.once('line', () => resolve()));
    const finished = new Promise<void>((resolve, reject) => {
      lines.on('line', (line) => {
        if (line === 'ready' || line === 'done') return;
        acknowledged.push(JSON.parse(line) as Acknowledged);
        if (p === victim && ++mine === killAfter) {
          killedAfter = mine;
          child.kill('SIGKILL');
        }
      });
      child.on('exit', (code, signal) => (code === 0 || (p === victim && signal === 'SIGKILL') ? resolve() : reject(new Error(`client ${p} exited ${code ?? signal}: ${stderr}`))));
    });
    return { child, ready, finished };
  });
  await Promise.all(children.map((c) => c.ready));
  for (const c of children) c.child.stdin.end('go\n');
  await Promise.all(children.map((c) => c.finished));
  const rows = await admin.query(`SELECT body FROM ${schema}.events ORDER BY seq`);
  const events = (rows.rows as { body: string }[]).map((r) => JSON.parse(r.body) as LedgerEvent);
  return { acknowledged, events, killedAfter, treeRoot };
}

describePg('Jepsen-style race of 8 client processes on one PostgreSQL log', () => {
  let admin: Pool;
  beforeAll(() => {
    admin = adminPool();
  });
  afterAll(() => admin.end());

  it('keeps every invariant at every prefix, with a client SIGKILLed mid-load', async () => {
    const run = await race(admin, false);
    expect(run.killedAfter).toBe(3);
    expect(checkHistory(run.events, run.acknowledged)).toEqual([]);
    // Liveness too: the budgets were used up exactly (an in-flight call of the killed client counts).
    const issued = run.events.flatMap((e) => (e.type === 'grant.issued' ? [e] : []));
    expect(issued).toHaveLength(6);
    for (const grant of issued.slice(0, 2)) {
      expect(run.events.filter((e) => e.type === 'call.admitted' && e.grantId === grant.grantId)).toHaveLength(budgetCalls);
    }
    // The tree: its root's 12 calls were all used, spread over its branches.
    const inTree = new Set(issued.filter((g) => g.grantId === run.treeRoot || g.parentGrantId !== undefined).map((g) => g.grantId));
    expect(run.events.filter((e) => e.type === 'call.admitted' && inTree.has(e.grantId))).toHaveLength(treeRootCalls);
    expect(run.acknowledged.filter((a) => a.status === 'rejected' && a.reason === 'ledger_unavailable')).toEqual([]);
  });

  it('catches the race in a naive read-then-write store: the same checker finds admissions over budget', async () => {
    const run = await race(admin, true);
    const violations = checkHistory(run.events, run.acknowledged);
    expect(violations.some((v) => /over its (call|byte) budget/.test(v))).toBe(true);
  });
});

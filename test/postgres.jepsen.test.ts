import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import type { Pool } from 'pg';
import { inputBytesOf, type LedgerEvent } from '../src';
import { checkHistory, type Acknowledged } from './support/historyChecker';
import { hour, pgLedger } from './support/pgLedger';
import { adminPool, describePg, freshSchema, url } from './support/pgTest';

// Clients load the built library (dist/), which `npm test` builds first.
const client = path.join(__dirname, 'fixtures', 'pg-jepsen-client.js');
const processes = 8;
const attemptsPerProcess = 24;
const budgetCalls = 15;
const spendTool = { name: 'spend', inputSchema: { type: 'object', properties: { note: { type: 'string' } }, required: ['note'] }, run: async () => 'spent' };

interface Run {
  readonly acknowledged: Acknowledged[];
  readonly events: LedgerEvent[];
  readonly killedAfter: number;
}

/** Shared grants (a call budget, and a byte budget that fits exactly `budgetCalls` calls), on a fresh schema. */
async function sharedGrants(schema: string): Promise<{ name: string; token: string }[]> {
  const ledger = await pgLedger(schema);
  await ledger.registerTool(spendTool);
  const callBytes = inputBytesOf({ note: 'p0-000' });
  const calls = await ledger.issue({ tools: ['spend'], expiresAt: Date.now() + hour, budget: { calls: budgetCalls, inputBytes: 1_000_000 } });
  const bytes = await ledger.issue({ tools: ['spend'], expiresAt: Date.now() + hour, budget: { calls: 1_000, inputBytes: budgetCalls * callBytes } });
  await ledger.close();
  return [
    { name: 'calls', token: calls.token },
    { name: 'bytes', token: bytes.token },
  ];
}

/** 8 client processes race; the last one is SIGKILLed after its third acknowledged outcome. */
async function race(admin: Pool, naive: boolean): Promise<Run> {
  const schema = freshSchema(naive ? 'naive' : 'jepsen');
  const grants = await sharedGrants(schema);
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
  return { acknowledged, events, killedAfter };
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
    const grantIds = run.events.flatMap((e) => (e.type === 'grant.issued' ? [e.grantId] : []));
    expect(grantIds).toHaveLength(2);
    for (const grantId of grantIds) {
      expect(run.events.filter((e) => e.type === 'call.admitted' && e.grantId === grantId)).toHaveLength(budgetCalls);
    }
    expect(run.acknowledged.filter((a) => a.status === 'rejected' && a.reason === 'ledger_unavailable')).toEqual([]);
  });

  it('catches the race in a naive read-then-write store: the same checker finds admissions over budget', async () => {
    const run = await race(admin, true);
    const violations = checkHistory(run.events, run.acknowledged);
    expect(violations.some((v) => /over its (call|byte) budget/.test(v))).toBe(true);
  });
});

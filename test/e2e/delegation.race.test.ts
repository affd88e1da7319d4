import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { createLedger, sqliteStore, verify, type LedgerEvent } from '../../src';
import { sqliteTempDir } from '../support/sqliteFiles';

// Workers load the built library (dist/), which `npm test` builds first.
const tmp = sqliteTempDir();
afterAll(() => tmp.cleanup());

const rootCalls = 10;
const mids = 8;
const leavesPerMid = 8;
const callsPerLeaf = 2;
const threads = 8;

interface Result {
  readonly outcomes: readonly { status: string; reason?: string }[];
  readonly runs: number;
}

/** root (calls: 10) → 8 mid grants → 8 leaves each: 64 leaves, each with the whole 10 as its own cap. */
async function tree(file: string) {
  const ledger = createLedger({ store: sqliteStore({ path: file }) });
  await ledger.registerTool({ name: 'work', inputSchema: { type: 'object', properties: { n: { type: 'integer' } } }, run: () => null });
  const root = await ledger.issue({ tools: ['work'], expiresAt: Date.now() + 3_600_000, budget: { calls: rootCalls, inputBytes: 1_000_000 } });
  const midGrants: string[] = [];
  const leaves: { grantId: string; token: string; mid: string }[] = [];
  for (let m = 0; m < mids; m++) {
    const mid = await ledger.attenuate(root.token, {});
    if (mid.status !== 'issued') throw new Error('mid refused');
    midGrants.push(mid.grantId);
    for (let l = 0; l < leavesPerMid; l++) {
      const leaf = await ledger.attenuate(mid.token, {});
      if (leaf.status !== 'issued') throw new Error('leaf refused');
      leaves.push({ grantId: leaf.grantId, token: leaf.token, mid: mid.grantId });
    }
  }
  await ledger.close();
  return { root, midGrants, leaves };
}

it(`64 leaves under one root (calls: ${rootCalls}), raced from ${threads} worker threads on one SQLite file: exactly ${rootCalls} admitted, and the merged log verifies`, async () => {
  const file = tmp.file('delegation-race.sqlite');
  const { root, midGrants, leaves } = await tree(file);
  expect(leaves).toHaveLength(64);
  const gate = new SharedArrayBuffer(4);
  const results = await new Promise<Result[]>((resolve, reject) => {
    const collected: Result[] = [];
    let ready = 0;
    for (let w = 0; w < threads; w++) {
      const tokens = leaves.filter((_, i) => i % threads === w).map((l) => l.token);
      const worker = new Worker(path.join(__dirname, '..', 'fixtures', 'delegation-race-worker.js'), { workerData: { file, tokens, callsPerLeaf, gate } });
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
    }
  });
  const outcomes = results.flatMap((r) => r.outcomes);
  expect(outcomes).toHaveLength(64 * callsPerLeaf);
  expect(outcomes.filter((o) => o.status === 'completed')).toHaveLength(rootCalls);
  expect(outcomes.filter((o) => o.status === 'rejected' && o.reason === 'call_budget_exhausted')).toHaveLength(64 * callsPerLeaf - rootCalls);
  expect(results.reduce((n, r) => n + r.runs, 0)).toBe(rootCalls);

  const ledger = createLedger({ store: sqliteStore({ path: file, verifyOnOpen: 'full' }) });
  const events: LedgerEvent[] = ledger.events().slice();
  expect(verify(events)).toMatchObject({ ok: true, problems: [] });
  expect(ledger.usage(root.grantId).calls).toEqual({ limit: rootCalls, used: rootCalls });
  // Every grant's usage is its subtree's: the mids' add up to the root's, each leaf's to at most the root's.
  expect(midGrants.reduce((n, id) => n + ledger.usage(id).calls.used, 0)).toBe(rootCalls);
  for (const mid of midGrants) {
    const below = leaves.filter((l) => l.mid === mid).reduce((n, l) => n + ledger.usage(l.grantId).calls.used, 0);
    expect(ledger.usage(mid).calls.used).toBe(below);
  }
  const admitted = events.filter((e): e is Extract<LedgerEvent, { type: 'call.admitted' }> => e.type === 'call.admitted');
  expect(admitted).toHaveLength(rootCalls);
  for (const e of admitted) expect(e.ancestors?.[0]).toBe(root.grantId);
  await ledger.close();
});

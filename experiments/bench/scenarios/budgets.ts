import { createLedger, type Ledger } from '../../../src';
import { inputSchema, policy, request } from '../policy';
import { interleaved, round } from '../stats';
import type { BenchContext, ScenarioResult } from './types';

const metered = `${policy.tool}.metered`;
/** Makes every bench key unique across rounds (a call index repeats from round to round). */
let keyCounter = 0;

async function budgetLedger(): Promise<{ ledger: Ledger; plain: string; budgeted: string }> {
  // Keys live 50 ms: a sequential run binds one per call, so the tree holds a few thousand live keys
  // (under the 10,000 bound) and each keyed admission also evicts the expired ones, as in steady use.
  const ledger = createLedger({ idempotencyTtlMs: 50 });
  type Args = { path: string; length: number };
  const resources = (args: Args) => [`fs:/${args.path}`];
  await ledger.registerTool<Args>({ name: policy.tool, inputSchema, resources, run: async () => undefined });
  // The metered twin: reserves on one meter by the requested length, reports half of it.
  await ledger.registerTool<Args>({
    name: metered,
    inputSchema,
    resources,
    cost: (args) => ({ usd_micros: args.length }),
    run: async (args, ctx) => ctx.report({ usd_micros: args.length >> 1 }),
  });
  const narrowing = { properties: { length: { maximum: policy.lengthMax } } };
  const common = { resources: [`fs:/${policy.pathPrefix}`], expiresAt: Date.now() + 24 * 3_600_000 };
  const plain = await ledger.issue({ ...common, tools: [policy.tool], args: { [policy.tool]: narrowing }, budget: { calls: policy.callsBudget, inputBytes: policy.bytesBudget } });
  // A rate that a sequential run never reaches (256 calls per ms), so every call is admitted and
  // each admission pays the ring of 256 admission times it keeps.
  const budgeted = await ledger.issue({
    ...common,
    tools: [metered],
    args: { [metered]: narrowing },
    budget: { calls: policy.callsBudget, inputBytes: policy.bytesBudget, meters: { usd_micros: Number.MAX_SAFE_INTEGER }, rate: { calls: 256, windowMs: 1 } },
  });
  return { ledger, plain: plain.token, budgeted: budgeted.token };
}

async function call(ledger: Ledger, token: string, tool: string, i: number, keyed = false): Promise<void> {
  const outcome = keyed ? await ledger.invoke(token, tool, request(i), { idempotencyKey: `bench-${i}-${keyCounter++}` }) : await ledger.invoke(token, tool, request(i));
  if (outcome.status !== 'completed') throw new Error(`bench call ${i} was ${outcome.status}${outcome.status === 'rejected' ? ` (${outcome.reason})` : ''}`);
}

/**
 * Scenario 12: a call with a meter (reserved by cost(args), settled by ctx.report) and a rate window
 * against a plain call of the same tool shape, in one ledger, interleaved in rounds like scenario 1.
 */
export async function budgets(ctx: BenchContext): Promise<ScenarioResult> {
  const { ledger, plain, budgeted } = await budgetLedger();
  const figures = await interleaved(
    {
      'plain call': (i) => call(ledger, plain, policy.tool, i),
      'meter + rate window': (i) => call(ledger, budgeted, metered, i),
      'meter + rate window + idempotency key': (i) => call(ledger, budgeted, metered, i, true),
    },
    ctx.quick ? 4 : 10,
    ctx.quick ? 2_000 : 10_000,
    ctx.quick ? 1_000 : 5_000,
  );
  await ledger.close();
  const rate = (name: string): number => figures[name]?.opsPerSec ?? Number.NaN;
  const median = (name: string): number => figures[name]?.medianUs ?? Number.NaN;
  const meterRatio = round(rate('plain call') / rate('meter + rate window'), 3);
  const ratio = round(rate('plain call') / rate('meter + rate window + idempotency key'), 3);
  return {
    id: '12',
    title: 'Budgets: a call with a meter, a rate window and an idempotency key against a plain call (same run)',
    figures,
    derived: {
      'cost ratio budgeted/plain': meterRatio,
      'median ratio budgeted/plain': round(median('meter + rate window') / median('plain call'), 3),
      'cost ratio budgeted+key/plain': ratio,
      'median ratio budgeted+key/plain': round(median('meter + rate window + idempotency key') / median('plain call'), 3),
    },
    target: { description: 'a call with meters, a rate window and an idempotency key costs ≤ 1.3× a plain call', value: ratio, limit: 1.3, pass: ratio <= 1.3 },
    notes: [
      'Sequential, in memory. The budgeted call runs cost(args), reserves one meter, keeps a ring of 256 admission times (rate 256 per ms, never reached), and settles a ctx.report.',
      'The keyed call adds a fresh idempotency key per call: two SHA-256 digests in the shell (key; key + tool + canonical arguments), a binding and its queue entry in the state, evicting keys older than the 50 ms TTL.',
    ],
  };
}

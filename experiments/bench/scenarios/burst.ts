import { oursLedger } from '../ours';
import { policy, request } from '../policy';
import { figures, now, round } from '../stats';
import type { BenchContext, ScenarioResult } from './types';

/**
 * Scenario 3: N invokes issued at once against a grant whose call budget admits 90% of them, vs
 * the same N one after another. Every outcome is checked: exactly the budget completes, the rest
 * are rejected `call_budget_exhausted`.
 */
export async function burst(ctx: BenchContext): Promise<ScenarioResult> {
  const n = ctx.quick ? 20_000 : 100_000;
  const budget = Math.floor(n * 0.9);

  const seq = await oursLedger({ callsBudget: budget });
  const seqLat = new Float64Array(n);
  let seqCompleted = 0;
  const s0 = now();
  for (let i = 0; i < n; i++) {
    const t = now();
    const o = await seq.ledger.invoke(seq.tokens[0] as string, policy.tool, request(i));
    seqLat[i] = now() - t;
    if (o.status === 'completed') seqCompleted++;
    else if (o.status !== 'rejected' || o.reason !== 'call_budget_exhausted') throw new Error(`sequential call ${i}: ${o.status}`);
  }
  const seqNs = now() - s0;
  await seq.ledger.close();

  const burstLedger = await oursLedger({ callsBudget: budget, pendingCommandsMax: 2 * n });
  const lat = new Float64Array(n);
  const b0 = now();
  const outcomes = await Promise.all(
    Array.from({ length: n }, (_, i) => {
      const t = now();
      return burstLedger.ledger.invoke(burstLedger.tokens[0] as string, policy.tool, request(i)).then((o) => {
        lat[i] = now() - t;
        return o;
      });
    }),
  );
  const burstNs = now() - b0;
  const completed = outcomes.filter((o) => o.status === 'completed').length;
  const budgetRejected = outcomes.filter((o) => o.status === 'rejected' && o.reason === 'call_budget_exhausted').length;
  const usage = burstLedger.ledger.usage(burstLedger.grantIds[0] as string);
  await burstLedger.ledger.close();
  const correct = completed === budget && budgetRejected === n - budget && usage.calls.used === budget && seqCompleted === budget;
  const ratio = round(burstNs / seqNs, 3);
  return {
    id: '3',
    title: `Burst: ${n.toLocaleString('en-US')} invokes at once vs one after another`,
    figures: { sequential: figures(seqLat, seqNs), burst: figures(lat, burstNs) },
    derived: { 'burst time / sequential time': ratio, completed, rejectedBudget: budgetRejected, allDecidedCorrectly: correct, sequentialMs: round(seqNs / 1e6), burstMs: round(burstNs / 1e6) },
    target: { description: 'burst completes, all decided correctly, in ≤ 2× the sequential time', value: ratio, limit: 2, pass: correct && ratio <= 2 },
    notes: ["A burst call's latency is from its invoke to its outcome, so it includes waiting behind the calls queued before it."],
  };
}

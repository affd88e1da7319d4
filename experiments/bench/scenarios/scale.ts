import { oursCall, oursLedger } from '../ours';
import { interleaved, round } from '../stats';
import type { BenchContext, ScenarioResult } from './types';

/** Scenario 2: the same admission with 100 live grants and with 100,000, each call on a random grant. */
export async function scale(ctx: BenchContext): Promise<ScenarioResult> {
  const big = ctx.quick ? 20_000 : 100_000;
  const small = await oursLedger({ grants: 100 });
  const t0 = Date.now();
  const large = await oursLedger({ grants: big });
  ctx.log(`  issued ${big} grants in ${Date.now() - t0} ms`);
  // A fixed pseudo-random walk over the grants, so cache misses are part of the cost.
  const pick = (tokens: readonly string[], i: number): string => tokens[(Math.imul(i, 2654435761) >>> 0) % tokens.length] as string;
  const smallName = 'ours, 100 grants';
  const largeName = `ours, ${big.toLocaleString('en-US')} grants`;
  const figures = await interleaved(
    {
      [smallName]: (i) => oursCall(small.ledger, pick(small.tokens, i), i),
      [largeName]: (i) => oursCall(large.ledger, pick(large.tokens, i), i),
    },
    ctx.quick ? 4 : 10,
    ctx.quick ? 2_000 : 10_000,
    ctx.quick ? 1_000 : 5_000,
  );
  await small.ledger.close();
  await large.ledger.close();
  const costRatio = round((figures[smallName]?.opsPerSec ?? 0) / (figures[largeName]?.opsPerSec ?? 1), 3);
  return {
    id: '2',
    title: `Scale: admission with ${big.toLocaleString('en-US')} live grants vs 100`,
    figures,
    derived: { 'cost ratio large/small': costRatio },
    target: { description: `cost per call with ${big.toLocaleString('en-US')} grants ≤ 1.5× with 100`, value: costRatio, limit: 1.5, pass: costRatio <= 1.5 },
    ...(ctx.quick ? { notes: ['--quick uses 20,000 grants instead of 100,000.'] } : {}),
  };
}

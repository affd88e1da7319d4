import type { Ledger } from '../../../src';
import { oursCall, oursLedger } from '../ours';
import { policy } from '../policy';
import { interleaved, round } from '../stats';
import type { BenchContext, ScenarioResult } from './types';

/** A chain of `depth` children below `token`; each level narrows too when `narrowEach` (a worst case). */
async function chain(ledger: Ledger, token: string, depth: number, narrowEach = false): Promise<string> {
  let current = token;
  for (let d = 0; d < depth; d++) {
    const request = narrowEach ? { args: { [policy.tool]: { properties: { length: { maximum: policy.lengthMax - d } } } } } : {};
    const child = await ledger.attenuate(current, request);
    if (child.status !== 'issued') throw new Error(`attenuate refused: ${child.reason}`);
    current = child.token;
  }
  return current;
}

/** A tree of `fanOut`^1 + … + `fanOut`^`depth` children below `token`; returns the leaves' tokens. */
async function tree(ledger: Ledger, token: string, fanOut: number, depth: number): Promise<{ leaves: string[]; nodes: number }> {
  let level = [token];
  let nodes = 1;
  for (let d = 0; d < depth; d++) {
    const next: string[] = [];
    for (const parent of level) {
      for (let k = 0; k < fanOut; k++) {
        const child = await ledger.attenuate(parent, {});
        if (child.status !== 'issued') throw new Error(`attenuate refused: ${child.reason}`);
        next.push(child.token);
      }
    }
    nodes += next.length;
    level = next;
  }
  return { leaves: level, nodes };
}

/**
 * Scenario 8: admission cost on a delegated grant by chain depth (the call is reserved on the grant
 * and every ancestor, in one event), and the cost of a call in a 1,000-node tree against the same
 * depth in a lone chain. Sequential, in memory, interleaved in rounds like scenario 1.
 */
export async function delegation(ctx: BenchContext): Promise<ScenarioResult> {
  const { ledger, tokens } = await oursLedger();
  const root = tokens[0] as string;
  const depth1 = await chain(ledger, root, 1);
  const depth4 = await chain(ledger, root, 4);
  const depth8 = await chain(ledger, root, 8);
  const depth8Narrowing = await chain(ledger, root, 8, true);
  // The tree-size comparison: calls on random leaves at depth 3 of a small tree and of a large one,
  // each in its own ledger, so both pay the same cache misses of a random walk over leaves.
  const small = await oursLedger();
  const few = await tree(small.ledger, small.tokens[0] as string, 2, 3); // 1 + 2 + 4 + 8 grants
  const big = await oursLedger();
  const forest = await tree(big.ledger, big.tokens[0] as string, 10, 3); // 1 + 10 + 100 + 1,000 grants
  ctx.log(`  1 root, chains of depth 1/4/8; trees of ${few.nodes} and ${forest.nodes} grants`);
  const pick = (leaves: readonly string[], i: number): string => leaves[(Math.imul(i, 2654435761) >>> 0) % leaves.length] as string;
  const treeName = `depth 3, random leaf of a ${forest.nodes.toLocaleString('en-US')}-grant tree`;
  const fewName = `depth 3, random leaf of a ${few.nodes}-grant tree`;
  const figures = await interleaved(
    {
      'root (depth 0)': (i) => oursCall(ledger, root, i),
      'depth 1': (i) => oursCall(ledger, depth1, i),
      [fewName]: (i) => oursCall(small.ledger, pick(few.leaves, i), i),
      [treeName]: (i) => oursCall(big.ledger, pick(forest.leaves, i), i),
      'depth 4': (i) => oursCall(ledger, depth4, i),
      'depth 8': (i) => oursCall(ledger, depth8, i),
      'depth 8, every level narrows': (i) => oursCall(ledger, depth8Narrowing, i),
    },
    ctx.quick ? 3 : 8,
    ctx.quick ? 1_000 : 5_000,
    ctx.quick ? 500 : 2_000,
  );
  await ledger.close();
  await small.ledger.close();
  await big.ledger.close();
  const rate = (name: string): number => figures[name]?.opsPerSec ?? Number.NaN;
  const median = (name: string): number => figures[name]?.medianUs ?? Number.NaN;
  const depthRatio = round(rate('depth 1') / rate('depth 8'), 3);
  const treeRatio = round(rate(fewName) / rate(treeName), 3);
  return {
    id: '8',
    title: 'Delegation: admission by chain depth (1, 4, 8), and in a 1,000-node tree',
    figures,
    derived: {
      'cost ratio depth 8/depth 1': depthRatio,
      'cost ratio depth 4/depth 1': round(rate('depth 1') / rate('depth 4'), 3),
      'cost ratio depth 1/root': round(rate('root (depth 0)') / rate('depth 1'), 3),
      'cost ratio 1,111-grant tree/15-grant tree (depth 3)': treeRatio,
      'cost ratio depth 8 narrowing at every level/depth 1': round(rate('depth 1') / rate('depth 8, every level narrows'), 3),
      'median ratio depth 8/depth 1': round(median('depth 8') / median('depth 1'), 3),
      'median ratio 1,111-grant tree/15-grant tree (depth 3)': round(median(treeName) / median(fewName), 3),
    },
    target: { description: 'cost per call at depth 8 ≤ 1.5× at depth 1', value: depthRatio, limit: 1.5, pass: depthRatio <= 1.5 },
    notes: [
      'Cost ratios are of throughput (ops/s, wall time of all calls, as scenario 2); median ratios are of per-call latency.',
      'Depth = ancestors of the called grant; each call is reserved on the grant and every ancestor in one call.admitted event.',
      'Only the root narrows the arguments except in "every level narrows" (one more ajv validation per level).',
      'Trees: a root with fan-out 2 (15 grants, 8 leaves) or 10 (1,111 grants, 1,000 leaves) to depth 3, each in its own ledger; calls go to leaves in a fixed pseudo-random order.',
    ],
  };
}

import { oursCall, oursLedger } from '../ours';
import { caslRateLimiter } from '../peers/caslRateLimiter';
import { casbinPeer } from '../peers/casbin';
import * as path from 'node:path';
import { remoteContender } from '../peers/remote';
import { floor } from '../peers/floor';
import { request } from '../policy';
import { interleaved, round } from '../stats';
import type { BenchContext, ScenarioResult } from './types';

/**
 * Scenario 1: sequential in-memory admission of an allowed call to a no-op tool, ours against the
 * floor and the peers, interleaved in rounds within one process.
 */
export async function admission(ctx: BenchContext): Promise<ScenarioResult> {
  const { ledger, tokens } = await oursLedger();
  const token = tokens[0] as string;
  const theFloor = floor();
  theFloor.addGrant('floor-token');
  const casl = caslRateLimiter();
  const casbin1 = await casbinPeer(1);
  const casbin1000 = await casbinPeer(1_000);
  const cedar = remoteContender(path.join(__dirname, '..', 'peers', 'cedarWorker.js'));
  const must = (allowed: boolean): void => {
    if (!allowed) throw new Error('a peer denied an allowed call');
  };
  const rounds = ctx.quick ? 4 : 10;
  const perRound = ctx.quick ? 2_000 : 10_000;
  const figures = await interleaved(
    {
      ours: (i) => oursCall(ledger, token, i),
      floor: (i) => {
        must(theFloor.call('floor-token', request(i)));
        if (theFloor.log.length > 1_000_000) theFloor.log.length = 0;
      },
      'casl+rate-limiter-flexible': async (i) => must(await casl.call('agent', request(i))),
      'casbin (1 policy)': (i) => must(casbin1.call('agent', request(i))),
      'casbin (1,000 policies)': (i) => must(casbin1000.call('agent', request(i))),
      'cedar-wasm (pre-parsed, own thread)': cedar,
    },
    rounds,
    perRound,
    ctx.quick ? 1_000 : 5_000,
  );
  await ledger.close();
  await cedar.close();
  const ours = figures.ours?.opsPerSec ?? 0;
  const derived: Record<string, number> = {};
  for (const [name, f] of Object.entries(figures)) if (name !== 'ours') derived[`ratio ours/${name}`] = round(ours / f.opsPerSec, 3);
  const ratio = derived['ratio ours/floor'] as number;
  return {
    id: '1',
    title: 'In-memory admission, sequential, no-op tool (ours vs floor and peers)',
    figures,
    derived,
    target: { description: "ours' rate ≥ 40% of the floor's", value: ratio, limit: 0.4, pass: ratio >= 0.4 },
    notes: ['Ours and the floor append two hash-chained events per call (admitted, completed); the peers keep no log.',
      'Cedar runs in a worker thread: in one isolate with the ledger, Node 20 aborts with a V8 deoptimizer fatal error.',
      'casbin and Cedar have no budgets of their own: two Map counters are added; CASL uses two rate-limiter-flexible limiters.'],
  };
}

/** Per-op latencies (ns) → the figures the bench reports. */
export interface Figures {
  readonly ops: number;
  readonly opsPerSec: number;
  readonly medianUs: number;
  readonly p99Us: number;
  readonly maxUs: number;
}

export function quantile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

/** `totalNs` is wall time of all ops (so ops/s includes what falls between the timed calls). */
export function figures(latenciesNs: Float64Array, totalNs: number): Figures {
  const sorted = Float64Array.from(latenciesNs).sort();
  return {
    ops: latenciesNs.length,
    opsPerSec: round(latenciesNs.length / (totalNs / 1e9)),
    medianUs: round(quantile(sorted, 0.5) / 1e3, 2),
    p99Us: round(quantile(sorted, 0.99) / 1e3, 2),
    maxUs: round((sorted[sorted.length - 1] ?? Number.NaN) / 1e3, 2),
  };
}

export function round(value: number, digits = 0): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export const now = (): number => Number(process.hrtime.bigint());

/** One contender of a sequential comparison: an async or sync operation on call `i`. */
export type Op = (i: number) => unknown;

/**
 * A contender that times its own rounds elsewhere (a worker thread): fills `into` with per-op ns and
 * resolves with the round's wall time in ns.
 */
export interface RemoteContender {
  round(start: number, count: number, into: Float64Array): Promise<number>;
}

/**
 * Runs contenders interleaved in rounds (A B C A B C …) so drift in machine load hits all of them
 * alike; each round times `perRound` sequential ops per contender. Returns per-contender figures.
 */
export async function interleaved(contenders: Record<string, Op | RemoteContender>, rounds: number, perRound: number, warmup: number): Promise<Record<string, Figures>> {
  const names = Object.keys(contenders);
  const run = async (c: Op | RemoteContender, start: number, count: number, into: Float64Array | undefined): Promise<number> => {
    if (typeof c !== 'function') return c.round(start, count, into ?? new Float64Array(count));
    const t0 = now();
    await runOps(c, start, count, into);
    return now() - t0;
  };
  for (const name of names) await run(contenders[name] as Op | RemoteContender, 0, warmup, undefined);
  const samples = new Map(names.map((n) => [n, new Float64Array(rounds * perRound)]));
  const totals = new Map(names.map((n) => [n, 0]));
  let next = warmup;
  for (let r = 0; r < rounds; r++) {
    for (const name of names) {
      const lat = samples.get(name) as Float64Array;
      const ns = await run(contenders[name] as Op | RemoteContender, next, perRound, lat.subarray(r * perRound, (r + 1) * perRound));
      totals.set(name, (totals.get(name) as number) + ns);
    }
    next += perRound;
  }
  const out: Record<string, Figures> = {};
  for (const name of names) out[name] = figures(samples.get(name) as Float64Array, totals.get(name) as number);
  return out;
}

async function runOps(op: Op, start: number, count: number, into: Float64Array | undefined): Promise<void> {
  for (let i = 0; i < count; i++) {
    const t0 = now();
    const r = op(start + i);
    if (r instanceof Promise) await r;
    if (into !== undefined) into[i] = now() - t0;
  }
}

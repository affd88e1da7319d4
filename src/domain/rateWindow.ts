import type { AdmissionTimes, GrantRecord } from './state';
import type { RateLimit } from './events';

// Sliding rate windows over admissions. A grant with `budget.rate` keeps the times of its last
// `rate.calls` admissions (its own calls and its descendants'), oldest first: enough to decide, so
// memory per grant is bounded by `calls` (plus one chunk). Times are log times (`at`), in log order.
//
// Kept as frozen chunks of at most `chunkTimesMax` times, so an admission copies the list of chunks
// and one chunk rather than all `calls` times: a flat frozen array of 256 times cost ≈ 28 µs per
// admission to copy (V8 slices a frozen array on its slow path) and ≈ 3.7 µs by hand, mostly freezing.

const chunkTimesMax = 32;

export const noAdmissionTimes: AdmissionTimes = Object.freeze({ chunks: Object.freeze([]), skip: 0, count: 0 });

/** How many of the kept admission times fall in the window ending at `at`: `time > at − windowMs`. */
export function admissionsInWindow(times: AdmissionTimes | undefined, rate: RateLimit, at: number): number {
  if (times === undefined) return 0;
  const from = at - rate.windowMs;
  const chunks = times.chunks;
  let n = 0;
  for (let c = 0; c < chunks.length; c++) {
    const chunk = chunks[c] as readonly number[];
    for (let i = c === 0 ? times.skip : 0; i < chunk.length; i++) if ((chunk[i] as number) > from) n++;
  }
  return n;
}

/**
 * The least wait (whole ms) after which this grant's window would admit a call at `at`, or 0 when it
 * admits now. Only a window holding `calls` times can be full, and then only if every one of them is
 * inside it: the scan stops at the first time outside (with a steady clock, the oldest, at once).
 * Full: the oldest kept time leaves it once `at + wait − windowMs ≥ oldest`.
 */
export function rateWait(grant: GrantRecord, at: number): number {
  const rate = grant.scope.budget.rate;
  const times = grant.admissions;
  if (rate === undefined || times === undefined || times.count < rate.calls) return 0;
  const from = at - rate.windowMs;
  const chunks = times.chunks;
  let oldest = Infinity;
  for (let c = 0; c < chunks.length; c++) {
    const chunk = chunks[c] as readonly number[];
    for (let i = c === 0 ? times.skip : 0; i < chunk.length; i++) {
      const t = chunk[i] as number;
      if (t <= from) return 0;
      if (t < oldest) oldest = t;
    }
  }
  return Math.max(1, Math.ceil(oldest + rate.windowMs - at));
}

/** The wait the whole chain needs (the longest of its grants' waits), 0 when every window admits. */
export function chainRateWait(grant: GrantRecord, ancestors: readonly GrantRecord[], at: number): number {
  let wait = rateWait(grant, at);
  for (const a of ancestors) wait = Math.max(wait, rateWait(a, at));
  return wait;
}

/** The kept times after one more admission at `at` (the oldest dropped beyond `calls`). Copies by hand: see above. */
export function withAdmissionTime(times: AdmissionTimes, calls: number, at: number): AdmissionTimes {
  const old = times.chunks;
  const last = old.length === 0 ? undefined : (old[old.length - 1] as readonly number[]);
  const chunks: (readonly number[])[] = [];
  const keep = last !== undefined && last.length < chunkTimesMax ? old.length - 1 : old.length;
  for (let c = 0; c < keep; c++) chunks.push(old[c] as readonly number[]);
  if (keep < old.length) {
    const grown: number[] = [];
    for (let i = 0; i < (last as readonly number[]).length; i++) grown.push((last as readonly number[])[i] as number);
    grown.push(at);
    chunks.push(Object.freeze(grown));
  } else {
    chunks.push(Object.freeze([at]));
  }
  let skip = times.skip;
  let count = times.count + 1;
  if (count > calls) {
    count--;
    skip++;
    if (skip === (chunks[0] as readonly number[]).length) {
      chunks.shift();
      skip = 0;
    }
  }
  return Object.freeze({ chunks: Object.freeze(chunks), skip, count });
}

/** The kept times, oldest first (for tests and audits). */
export function admissionTimes(times: AdmissionTimes | undefined): number[] {
  const out: number[] = [];
  if (times === undefined) return out;
  times.chunks.forEach((chunk, c) => out.push(...chunk.slice(c === 0 ? times.skip : 0)));
  return out;
}

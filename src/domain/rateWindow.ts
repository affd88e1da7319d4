import type { GrantRecord } from './state';
import type { RateLimit } from './events';

// Sliding rate windows over admissions. A grant with `budget.rate` keeps the times of its last
// `rate.calls` admissions (its own calls and its descendants'), oldest first: enough to decide, so
// memory per grant is bounded by `calls`. Times are log times (`at`), in log order.

/** How many of the kept admission times fall in the window ending at `at`: `time > at − windowMs`. */
export function admissionsInWindow(times: readonly number[] | undefined, rate: RateLimit, at: number): number {
  if (times === undefined) return 0;
  const from = at - rate.windowMs;
  let n = 0;
  for (const t of times) if (t > from) n++;
  return n;
}

/**
 * The least wait (whole ms) after which this grant's window would admit a call at `at`, or 0 when it
 * admits now. Full window: the oldest kept time leaves it once `at + wait − windowMs ≥ oldest`.
 */
export function rateWait(grant: GrantRecord, at: number): number {
  const rate = grant.scope.budget.rate;
  if (rate === undefined) return 0;
  const times = grant.admissions ?? [];
  if (admissionsInWindow(times, rate, at) < rate.calls) return 0;
  let oldest = Infinity;
  for (const t of times) if (t < oldest) oldest = t;
  return Math.max(1, Math.ceil(oldest + rate.windowMs - at));
}

/** The wait the whole chain needs (the longest of its grants' waits), 0 when every window admits. */
export function chainRateWait(grant: GrantRecord, ancestors: readonly GrantRecord[], at: number): number {
  let wait = rateWait(grant, at);
  for (const a of ancestors) wait = Math.max(wait, rateWait(a, at));
  return wait;
}

/** The kept times after one more admission at `at` (the oldest dropped beyond `calls`). */
export function withAdmissionTime(times: readonly number[], calls: number, at: number): readonly number[] {
  const from = times.length >= calls ? times.length - calls + 1 : 0;
  const next = times.slice(from);
  next.push(at);
  return Object.freeze(next);
}

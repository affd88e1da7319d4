/** One budget gauge: how much of a limit is used, and how much of that is held by calls still running. */
export interface Gauge {
  /** Stable key, e.g. `calls`, `inputBytes`, `meters.usd_micros`. */
  readonly key: string;
  readonly label: string;
  readonly limit: number;
  /** Used including in-flight reservations (as `ledger.usage` counts it). */
  readonly used: number;
  readonly inFlight: number;
}

type Numbers = { readonly [key: string]: unknown };

const labels: Readonly<Record<string, string>> = { calls: 'calls', inputBytes: 'input bytes' };
// Budget fields that are not an amount used up against a limit (a rate window is a different
// gauge: calls in the window, which issue 12's usage() reports as `rate.inWindow`).
const notAmounts = new Set(['rate']);

/**
 * The gauges of one grant, one per numeric budget field: `calls`, `inputBytes`, and each field of a
 * nested object of numbers (so `meters: { usd_micros }` gives `meters.usd_micros`), in budget order.
 * New budget kinds appear without a change here; fields absent from `used` count as 0.
 */
export function gaugesOf(budget: Numbers, used: Numbers, inFlight: Numbers): Gauge[] {
  const gauges: Gauge[] = [];
  for (const [key, limit] of Object.entries(budget)) {
    if (notAmounts.has(key)) continue;
    if (typeof limit === 'number') {
      gauges.push({ key, label: labels[key] ?? key, limit, used: numberAt(used, key), inFlight: numberAt(inFlight, key) });
    } else if (isNumbers(limit)) {
      const usedInner = isNumbers(used[key]) ? used[key] : {};
      const inFlightInner = isNumbers(inFlight[key]) ? inFlight[key] : {};
      for (const [inner, innerLimit] of Object.entries(limit)) {
        if (typeof innerLimit !== 'number') continue;
        gauges.push({ key: `${key}.${inner}`, label: inner, limit: innerLimit, used: numberAt(usedInner, inner), inFlight: numberAt(inFlightInner, inner) });
      }
    }
  }
  return gauges;
}

/** Adds amounts field by field (nested objects of numbers too), for in-flight sums. */
export function addAmounts(into: Record<string, unknown>, amounts: Numbers): void {
  for (const [key, value] of Object.entries(amounts)) {
    if (typeof value === 'number') into[key] = numberAt(into, key) + value;
    else if (isNumbers(value)) {
      const inner = isNumbers(into[key]) ? (into[key] as Record<string, unknown>) : (into[key] = {});
      addAmounts(inner as Record<string, unknown>, value);
    }
  }
}

function numberAt(values: Numbers, key: string): number {
  const value = Object.hasOwn(values, key) ? values[key] : undefined;
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

function isNumbers(value: unknown): value is Numbers {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Used share of the limit for drawing, clamped to 0..1 (a zero limit that is used is full). */
export function share(amount: number, limit: number): number {
  if (limit <= 0) return amount > 0 ? 1 : 0;
  return Math.min(1, Math.max(0, amount / limit));
}

import type { GrantRecord } from './state';
import type { MeterAmounts } from './events';
import { limits, meterNamePattern } from './limits';

// Named meters (two-phase: reserved at admission, charged at settlement). Maps are plain own data
// (a snapshot's JSON, an event's payload): every read is an own lookup, so a meter named
// `constructor` is a meter, never Object.prototype's member.

const own = (map: object, key: string): boolean => Object.prototype.hasOwnProperty.call(map, key);

function isAmount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** What is wrong with a meter map from the host or an agent (names, count, amounts), or undefined. Never echoes a value. */
export function meterAmountsProblem(value: unknown, what: string): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return `${what} must be an object of meter names to non-negative safe integers`;
  const names = Object.keys(value);
  if (names.length > limits.metersPerGrantMax) return `${what} may name at most ${limits.metersPerGrantMax} meters`;
  for (const name of names) {
    if (!meterNamePattern.test(name)) return `${what}: meter names must match ${meterNamePattern}`;
    if (!isAmount((value as Record<string, unknown>)[name])) return `${what}.${name} must be a non-negative safe integer`;
  }
  return undefined;
}

/**
 * A meter map from code the ledger does not control (a tool's `ctx.report`, a `cost(args)`), read
 * once: its keys once, each value once, into a frozen plain copy in name order that is then
 * validated. A getter or Proxy that answers differently on a second read never gets that answer
 * past the check (issue 30, item 10). A map that throws while read is a problem, never a throw.
 */
export function meterAmountsSnapshot(value: unknown, what: string): { readonly ok: true; readonly amounts: MeterAmounts } | { readonly ok: false; readonly problem: string } {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { ok: false, problem: `${what} must be an object of meter names to non-negative safe integers` };
  const copy: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  try {
    const names = Object.keys(value);
    // Bound before reading values: a Proxy can list any number of keys.
    if (names.length > limits.metersPerGrantMax) return { ok: false, problem: `${what} may name at most ${limits.metersPerGrantMax} meters` };
    for (const name of names) copy[name] = (value as Record<string, unknown>)[name];
  } catch {
    return { ok: false, problem: `${what} could not be read as plain data` };
  }
  const problem = meterAmountsProblem(copy, what);
  if (problem !== undefined) return { ok: false, problem };
  return { ok: true, amounts: sortedMeters(copy as MeterAmounts) };
}

/** The amount a map holds for a meter (0 when it names none). */
export function meterAmount(map: MeterAmounts | undefined, meter: string): number {
  return map !== undefined && own(map, meter) ? (map[meter] as number) : 0;
}

/** Whether a map names a meter (an own key). */
export function namesMeter(map: MeterAmounts | undefined, meter: string): boolean {
  return map !== undefined && own(map, meter);
}

/** A frozen map with the same keys in name order. */
export function sortedMeters(map: MeterAmounts): MeterAmounts {
  const out: Record<string, number> = {};
  for (const name of Object.keys(map).sort()) out[name] = map[name] as number;
  return Object.freeze(out);
}

/** A grant's meter usage changed by `delta` (positive: reserve; negative: release), only on the meters the grant caps. */
export function metersAfter(used: MeterAmounts, delta: MeterAmounts, sign: 1 | -1): MeterAmounts {
  let next: Record<string, number> | undefined;
  for (const name of Object.keys(delta)) {
    if (!own(used, name)) continue;
    next ??= { ...used };
    next[name] = (used[name] as number) + sign * (delta[name] as number);
  }
  return next === undefined ? used : Object.freeze(next);
}

/** The first meter (in name order) of a cost that the grant or an ancestor cannot cover, or undefined. */
export function exhaustedMeter(grant: GrantRecord, ancestors: readonly GrantRecord[], cost: MeterAmounts): string | undefined {
  for (const name of Object.keys(cost).sort()) {
    const amount = cost[name] as number;
    if (!covers(grant, name, amount)) return name;
    for (const a of ancestors) if (!covers(a, name, amount)) return name;
  }
  return undefined;
}

function covers(grant: GrantRecord, meter: string, amount: number): boolean {
  const limit = grant.scope.budget.meters;
  if (limit === undefined || !own(limit, meter)) return true; // a meter the grant does not cap
  return meterAmount(grant.metersUsed, meter) + amount <= (limit[meter] as number);
}

/**
 * What a grant's chain has left per meter: for each meter the grant or an ancestor caps, the least
 * `limit − used` over those that cap it (never below 0). Undefined when none caps any.
 */
export function metersLeft(grant: GrantRecord, ancestors: readonly GrantRecord[]): MeterAmounts | undefined {
  let left: Record<string, number> | undefined;
  for (const g of [...ancestors, grant]) {
    const limit = g.scope.budget.meters;
    if (limit === undefined) continue;
    for (const name of Object.keys(limit)) {
      const here = Math.max(0, (limit[name] as number) - meterAmount(g.metersUsed, name));
      left ??= {};
      left[name] = own(left, name) ? Math.min(left[name] as number, here) : here;
    }
  }
  return left === undefined ? undefined : sortedMeters(left);
}

/**
 * What a settlement charges per reserved meter: nothing on a refund; else the report's amount, at
 * most the reservation (a meter the report does not name is charged in full). `overrun` when the
 * report named more than a reservation or a meter that was not reserved.
 */
export function settlementCharge(reserved: MeterAmounts, report: MeterAmounts | undefined, refund: boolean): { readonly charged: MeterAmounts; readonly overrun: boolean } {
  const charged: Record<string, number> = {};
  let overrun = false;
  for (const name of Object.keys(reserved).sort()) {
    const most = reserved[name] as number;
    if (refund) charged[name] = 0;
    else if (report === undefined || !own(report, name)) charged[name] = most;
    else {
      const used = report[name] as number;
      if (used > most) overrun = true;
      charged[name] = Math.min(used, most);
    }
  }
  if (report !== undefined && !refund) for (const name of Object.keys(report)) if (!own(reserved, name)) overrun = true;
  return { charged: Object.freeze(charged), overrun };
}

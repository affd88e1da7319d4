import { meterAmount } from '../domain/meters';
import { admissionsInWindow } from '../domain/rateWindow';
import type { GrantRecord } from '../domain/state';
import type { Usage } from './types';

/**
 * `ledger.usage(grantId)` of one grant record: its amounts, the meters it caps and its rate window
 * now (the clock is read only for `rate.inWindow`; an unreadable clock counts every kept admission).
 */
export function grantUsage(grant: GrantRecord, clock: () => number): Usage {
  const budget = grant.scope.budget;
  const amounts = {
    calls: { limit: budget.calls, used: grant.used.calls },
    inputBytes: { limit: budget.inputBytes, used: grant.used.inputBytes },
  };
  let usage: Usage = amounts;
  if (budget.meters !== undefined) {
    const meters: Record<string, { readonly limit: number; readonly used: number }> = {};
    for (const name of Object.keys(budget.meters)) meters[name] = { limit: budget.meters[name] as number, used: meterAmount(grant.metersUsed, name) };
    usage = { ...amounts, meters };
  }
  const rate = budget.rate;
  if (rate === undefined) return usage;
  let now: unknown;
  try {
    now = clock();
  } catch {
    now = undefined;
  }
  const inWindow = typeof now === 'number' && Number.isFinite(now) ? admissionsInWindow(grant.admissions, rate, now) : (grant.admissions?.count ?? 0);
  return { ...usage, rate: { limit: rate.calls, windowMs: rate.windowMs, inWindow } };
}

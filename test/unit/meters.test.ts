import type { MeterAmounts } from '../../src/domain/events';
import { limits } from '../../src/domain/limits';
import { exhaustedMeter, meterAmount, meterAmountsProblem, metersAfter, metersLeft, namesMeter, settlementCharge, sortedMeters } from '../../src/domain/meters';
import type { GrantRecord } from '../../src/domain/state';
import { grantRecord } from '../support/grantRecord';

// Named meters, one rule per test, on records built here (no ledger).
function grant(meters: MeterAmounts | undefined, metersUsed?: MeterAmounts): GrantRecord {
  return grantRecord({ budget: meters === undefined ? {} : { meters }, ...(metersUsed === undefined ? {} : { metersUsed }) });
}

describe('meterAmountsProblem', () => {
  it('accepts an empty map and a map of safe non-negative integers', () => {
    expect(meterAmountsProblem({}, 'cost')).toBeUndefined();
    expect(meterAmountsProblem({ usd_micros: 0, tokens: Number.MAX_SAFE_INTEGER }, 'cost')).toBeUndefined();
  });

  it('refuses null, an array and a non-object, naming the field', () => {
    for (const value of [null, [], 'x', 3, undefined]) expect(meterAmountsProblem(value, 'budget.meters')).toBe('budget.meters must be an object of meter names to non-negative safe integers');
  });

  it('accepts exactly metersPerGrantMax meters and refuses one more', () => {
    const map = (n: number): Record<string, number> => Object.fromEntries(Array.from({ length: n }, (_, i) => [`m${i}`, 1]));
    expect(meterAmountsProblem(map(limits.metersPerGrantMax), 'cost')).toBeUndefined();
    expect(meterAmountsProblem(map(limits.metersPerGrantMax + 1), 'cost')).toBe(`cost may name at most ${limits.metersPerGrantMax} meters`);
  });

  it('refuses a meter name outside the pattern', () => {
    expect(meterAmountsProblem({ USD: 1 }, 'cost')).toMatch(/^cost: meter names must match/);
    expect(meterAmountsProblem({ ok: 1, '9x': 1 }, 'cost')).toMatch(/^cost: meter names must match/);
  });

  it('refuses negative, fractional, unsafe and non-number amounts, naming the meter but not the value', () => {
    for (const amount of [-1, 1.5, Number.MAX_SAFE_INTEGER + 1, '1', null, Number.NaN]) {
      const problem = meterAmountsProblem({ ok: 0, usd: amount }, 'cost');
      expect(problem).toBe('cost.usd must be a non-negative safe integer');
    }
  });
});

describe('meterAmount and namesMeter', () => {
  it('reads an own amount and 0 for an absent meter or no map', () => {
    expect(meterAmount({ usd: 7 }, 'usd')).toBe(7);
    expect(meterAmount({ usd: 7 }, 'tokens')).toBe(0);
    expect(meterAmount(undefined, 'usd')).toBe(0);
  });

  it('never reads an inherited member as a meter', () => {
    expect(meterAmount({}, 'constructor')).toBe(0);
    expect(namesMeter({}, 'constructor')).toBe(false);
    expect(namesMeter(undefined, 'usd')).toBe(false);
    expect(namesMeter({ usd: 0 }, 'usd')).toBe(true);
  });
});

describe('sortedMeters', () => {
  it('returns a frozen copy with the keys in name order', () => {
    const sorted = sortedMeters({ b: 2, a: 1, c: 3 });
    expect(Object.keys(sorted)).toEqual(['a', 'b', 'c']);
    expect(sorted).toEqual({ a: 1, b: 2, c: 3 });
    expect(Object.isFrozen(sorted)).toBe(true);
  });
});

describe('metersAfter', () => {
  it('adds a reservation on the meters the grant caps and ignores the others', () => {
    const after = metersAfter({ usd: 5, tokens: 1 }, { usd: 3, other: 9 }, 1);
    expect(after).toEqual({ usd: 8, tokens: 1 });
    expect(Object.isFrozen(after)).toBe(true);
  });

  it('subtracts on a release', () => {
    expect(metersAfter({ usd: 5 }, { usd: 3 }, -1)).toEqual({ usd: 2 });
  });

  it('returns the same map when no meter of the delta is capped', () => {
    const used = { usd: 5 };
    expect(metersAfter(used, { other: 3 }, 1)).toBe(used);
  });

  it('does not change the map it was given', () => {
    const used = { usd: 5 };
    metersAfter(used, { usd: 3 }, 1);
    expect(used).toEqual({ usd: 5 });
  });
});

describe('exhaustedMeter', () => {
  it('admits a cost up to and including the limit', () => {
    expect(exhaustedMeter(grant({ usd: 10 }, { usd: 4 }), [], { usd: 6 })).toBeUndefined();
  });

  it('names a meter whose cost would go one past the limit', () => {
    expect(exhaustedMeter(grant({ usd: 10 }, { usd: 4 }), [], { usd: 7 })).toBe('usd');
  });

  it('counts nothing used when the grant has no usage yet', () => {
    expect(exhaustedMeter(grant({ usd: 10 }), [], { usd: 10 })).toBeUndefined();
    expect(exhaustedMeter(grant({ usd: 10 }), [], { usd: 11 })).toBe('usd');
  });

  it('lets through a meter the grant does not cap, and any cost on a grant with no meters', () => {
    expect(exhaustedMeter(grant({ usd: 1 }), [], { tokens: 1_000 })).toBeUndefined();
    expect(exhaustedMeter(grant(undefined), [], { usd: 1_000 })).toBeUndefined();
  });

  it('names the first exhausted meter in name order', () => {
    expect(exhaustedMeter(grant({ a: 0, b: 0 }), [], { b: 1, a: 1 })).toBe('a');
    expect(exhaustedMeter(grant({ a: 5, b: 0 }), [], { b: 1, a: 1 })).toBe('b');
  });

  it('names a meter an ancestor cannot cover though the grant can', () => {
    const child = grant({ usd: 100 });
    const root = grant({ usd: 10 }, { usd: 9 });
    expect(exhaustedMeter(child, [root], { usd: 2 })).toBe('usd');
    expect(exhaustedMeter(child, [grant({ usd: 100 }), root], { usd: 1 })).toBeUndefined();
  });
});

describe('metersLeft', () => {
  it('is undefined when no grant of the chain caps a meter', () => {
    expect(metersLeft(grant(undefined), [grant(undefined)])).toBeUndefined();
  });

  it('is limit minus used per capped meter, in name order, frozen', () => {
    const left = metersLeft(grant({ usd: 10, a: 3 }, { usd: 4 }), []);
    expect(left).toEqual({ a: 3, usd: 6 });
    expect(Object.keys(left ?? {})).toEqual(['a', 'usd']);
    expect(Object.isFrozen(left)).toBe(true);
  });

  it('takes the least over the chain, whichever grant holds it', () => {
    expect(metersLeft(grant({ usd: 10 }), [grant({ usd: 3 })])).toEqual({ usd: 3 });
    expect(metersLeft(grant({ usd: 3 }), [grant({ usd: 10 })])).toEqual({ usd: 3 });
  });

  it('includes a meter only an ancestor caps', () => {
    expect(metersLeft(grant({ usd: 5 }), [grant({ tokens: 7 })])).toEqual({ tokens: 7, usd: 5 });
  });

  it('never goes below zero when usage is over the limit', () => {
    expect(metersLeft(grant({ usd: 3 }, { usd: 5 }), [])).toEqual({ usd: 0 });
  });
});

describe('settlementCharge', () => {
  it('charges nothing on a refund, whatever the report says', () => {
    expect(settlementCharge({ usd: 5, tokens: 2 }, { usd: 9, other: 1 }, true)).toEqual({ charged: { tokens: 0, usd: 0 }, overrun: false });
  });

  it('charges a reservation in full when there is no report', () => {
    const { charged, overrun } = settlementCharge({ usd: 5 }, undefined, false);
    expect(charged).toEqual({ usd: 5 });
    expect(overrun).toBe(false);
    expect(Object.isFrozen(charged)).toBe(true);
  });

  it('charges a reserved meter the report does not name in full', () => {
    expect(settlementCharge({ usd: 5, tokens: 3 }, { usd: 1 }, false)).toEqual({ charged: { tokens: 3, usd: 1 }, overrun: false });
  });

  it('charges what the report says up to and including the reservation', () => {
    expect(settlementCharge({ usd: 5 }, { usd: 5 }, false)).toEqual({ charged: { usd: 5 }, overrun: false });
    expect(settlementCharge({ usd: 5 }, { usd: 0 }, false)).toEqual({ charged: { usd: 0 }, overrun: false });
  });

  it('caps a report above the reservation at the reservation and marks it an overrun', () => {
    expect(settlementCharge({ usd: 5 }, { usd: 6 }, false)).toEqual({ charged: { usd: 5 }, overrun: true });
  });

  it('marks a report naming an unreserved meter an overrun, without charging it', () => {
    expect(settlementCharge({ usd: 5 }, { usd: 1, tokens: 1 }, false)).toEqual({ charged: { usd: 1 }, overrun: true });
  });

  it('lists charged meters in name order', () => {
    expect(Object.keys(settlementCharge({ b: 1, a: 1 }, undefined, false).charged)).toEqual(['a', 'b']);
  });
});

import type { RateLimit } from '../../src/domain/events';
import { admissionsInWindow, admissionTimes, chainRateWait, noAdmissionTimes, rateWait, withAdmissionTime } from '../../src/domain/rateWindow';
import type { AdmissionTimes } from '../../src/domain/state';
import { grantRecord } from '../support/grantRecord';

// Sliding rate windows, one rule per test, on times built here.
function timesOf(calls: number, ...ats: number[]): AdmissionTimes {
  let times = noAdmissionTimes;
  for (const at of ats) times = withAdmissionTime(times, calls, at);
  return times;
}

function rated(rate: RateLimit, ...ats: number[]) {
  return grantRecord({ budget: { rate }, admissions: timesOf(rate.calls, ...ats) });
}

describe('withAdmissionTime', () => {
  it('keeps every time, oldest first, while there are at most `calls` of them', () => {
    expect(admissionTimes(timesOf(3, 10, 20, 30))).toEqual([10, 20, 30]);
    expect(timesOf(3, 10, 20, 30).count).toBe(3);
  });

  it('drops the oldest time beyond `calls`', () => {
    const times = timesOf(2, 10, 20, 30);
    expect(admissionTimes(times)).toEqual([20, 30]);
    expect(times.count).toBe(2);
  });

  it('keeps the last `calls` times across many chunks', () => {
    const ats = Array.from({ length: 200 }, (_, i) => i);
    const times = timesOf(70, ...ats);
    expect(admissionTimes(times)).toEqual(ats.slice(130));
    expect(times.count).toBe(70);
    expect(times.skip).toBeLessThan(times.chunks[0]?.length ?? 0);
  });

  it('fills a chunk up to 32 times before starting the next', () => {
    const ats = Array.from({ length: 33 }, (_, i) => i);
    const times = timesOf(100, ...ats);
    expect(times.chunks.map((c) => c.length)).toEqual([32, 1]);
  });

  it('drops an emptied first chunk and resets the skip', () => {
    const ats = Array.from({ length: 34 }, (_, i) => i);
    const times = timesOf(2, ...ats);
    expect(times.chunks.map((c) => c.length)).toEqual([2]);
    expect(times.skip).toBe(0);
    expect(admissionTimes(times)).toEqual([32, 33]);
  });

  it('returns frozen times and leaves the times it was given unchanged', () => {
    const before = timesOf(5, 1, 2);
    const after = withAdmissionTime(before, 5, 3);
    expect(admissionTimes(before)).toEqual([1, 2]);
    expect(Object.isFrozen(after)).toBe(true);
    expect(Object.isFrozen(after.chunks)).toBe(true);
    for (const chunk of after.chunks) expect(Object.isFrozen(chunk)).toBe(true);
  });
});

describe('admissionTimes', () => {
  it('is empty for no times', () => {
    expect(admissionTimes(undefined)).toEqual([]);
    expect(admissionTimes(noAdmissionTimes)).toEqual([]);
  });
});

describe('admissionsInWindow', () => {
  it('counts 0 with no kept times', () => {
    expect(admissionsInWindow(undefined, { calls: 2, windowMs: 100 }, 1_000)).toBe(0);
  });

  it('counts times strictly after at − windowMs', () => {
    const times = timesOf(10, 899, 900, 901, 1_000);
    expect(admissionsInWindow(times, { calls: 10, windowMs: 100 }, 1_000)).toBe(2);
  });

  it('skips the dropped times of the first chunk', () => {
    const times = timesOf(2, 995, 996, 997);
    expect(admissionsInWindow(times, { calls: 2, windowMs: 100 }, 1_000)).toBe(2);
  });

  it('skips dropped times in the first chunk only', () => {
    const ats = Array.from({ length: 45 }, (_, i) => 1_000 + i);
    const times = timesOf(40, ...ats);
    expect(times.skip).toBe(5);
    expect(times.chunks).toHaveLength(2);
    expect(admissionsInWindow(times, { calls: 40, windowMs: 1_000 }, 1_044)).toBe(40);
  });

  it('counts times in every chunk', () => {
    const ats = Array.from({ length: 40 }, (_, i) => 1_000 + i);
    expect(admissionsInWindow(timesOf(100, ...ats), { calls: 100, windowMs: 1_000 }, 1_040)).toBe(40);
  });
});

describe('rateWait', () => {
  it('is 0 for a grant without a rate window', () => {
    expect(rateWait(grantRecord({ admissions: timesOf(1, 1_000) }), 1_000)).toBe(0);
  });

  it('is 0 for a grant with a rate window and no admissions yet', () => {
    expect(rateWait(grantRecord({ budget: { rate: { calls: 1, windowMs: 100 } } }), 1_000)).toBe(0);
  });

  it('is 0 while fewer than `calls` admissions are kept', () => {
    expect(rateWait(rated({ calls: 2, windowMs: 100 }, 1_000), 1_000)).toBe(0);
  });

  it('is the time until the oldest kept admission leaves the window when it is full', () => {
    expect(rateWait(rated({ calls: 2, windowMs: 100 }, 950, 990), 1_000)).toBe(50);
  });

  it('is 0 once the oldest admission is exactly windowMs old', () => {
    expect(rateWait(rated({ calls: 2, windowMs: 100 }, 900, 990), 1_000)).toBe(0);
  });

  it('is 1 when the oldest admission is one ms short of leaving', () => {
    expect(rateWait(rated({ calls: 2, windowMs: 100 }, 901, 990), 1_000)).toBe(1);
  });

  it('is at least 1 ms and rounds a fractional wait up', () => {
    expect(rateWait(rated({ calls: 1, windowMs: 100 }, 1_000), 1_099.5)).toBe(1);
    expect(rateWait(rated({ calls: 1, windowMs: 100 }, 1_000), 1_050.5)).toBe(50);
  });

  it('looks only at the kept (last `calls`) admissions', () => {
    expect(rateWait(rated({ calls: 2, windowMs: 100 }, 100, 960, 980), 1_000)).toBe(60);
  });

  it('takes the oldest kept time, not the first, when the clock stepped back (every chunk past the first read whole)', () => {
    const ats = [...Array.from({ length: 32 }, (_, i) => 1_000 + i), 900, 900, 900, 900, 900, ...Array.from({ length: 8 }, (_, i) => 1_040 + i)];
    const grant = rated({ calls: 40, windowMs: 1_000 }, ...ats);
    expect(grant.admissions?.skip).toBe(5);
    expect(rateWait(grant, 1_500)).toBe(400);
  });

  it('finds the oldest admission in a later chunk', () => {
    const ats = Array.from({ length: 40 }, (_, i) => 1_000 + i);
    expect(rateWait(rated({ calls: 40, windowMs: 1_000 }, ...ats), 1_500)).toBe(500);
  });
});

describe('chainRateWait', () => {
  it('is the longest wait of the grant and its ancestors', () => {
    const open = rated({ calls: 5, windowMs: 100 }, 990);
    const short = rated({ calls: 1, windowMs: 100 }, 950);
    const long = rated({ calls: 1, windowMs: 100 }, 980);
    expect(chainRateWait(open, [], 1_000)).toBe(0);
    expect(chainRateWait(short, [long], 1_000)).toBe(80);
    expect(chainRateWait(long, [short], 1_000)).toBe(80);
    expect(chainRateWait(open, [open, short], 1_000)).toBe(50);
  });
});

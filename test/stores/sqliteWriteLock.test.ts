import { WriteLock, writeLockTiming, type WriteLockDeps } from '../../src/stores/sqlite/sqliteWriteLock';

/** A write lock on a fake clock: `sleep` advances time; `busyFor` tries fail before the lock frees. */
function fakeLock(busyTimeoutMs: number, busyFor: number[] = []) {
  let t = 1_000;
  const slept: number[] = [];
  let tries = 0;
  const pending = [...busyFor];
  const deps: WriteLockDeps = {
    now: () => t,
    sleep: (ms) => {
      slept.push(ms);
      t += ms;
    },
    random: () => 0.5,
    tryBegin: () => {
      tries++;
      const left = pending[0];
      if (left === undefined) return true;
      if (left <= 1) pending.shift();
      else pending[0] = left - 1;
      return false;
    },
  };
  return {
    lock: new WriteLock(busyTimeoutMs, deps),
    slept,
    tries: () => tries,
    advance: (ms: number) => void (t += ms),
    /** The next acquisition meets `n` failed tries first. */
    busyNext: (n: number) => void pending.push(n),
  };
}

const { retryMinMs, retryMaxMs, handoffMs, turnMs, contendedForMs } = writeLockTiming;

describe('taking the SQLite write lock', () => {
  it('takes a free lock at once, without sleeping', () => {
    const f = fakeLock(5_000);
    expect(f.lock.acquire()).toBe(true);
    expect(f.tries()).toBe(1);
    expect(f.slept).toEqual([]);
  });

  it('retries a held lock after short jittered sleeps until it is free', () => {
    const f = fakeLock(5_000, [3]);
    expect(f.lock.acquire()).toBe(true);
    expect(f.tries()).toBe(4);
    expect(f.slept).toHaveLength(3);
    for (const ms of f.slept) {
      expect(ms).toBeGreaterThanOrEqual(retryMinMs);
      expect(ms).toBeLessThanOrEqual(retryMaxMs);
    }
  });

  it('gives up once busyTimeoutMs has passed, never sleeping past it', () => {
    const f = fakeLock(20, [Number.POSITIVE_INFINITY]);
    expect(f.lock.acquire()).toBe(false);
    expect(f.slept.reduce((a, b) => a + b, 0)).toBeCloseTo(20, 9);
    // Probing often is the point: a waiter sees the lock free between two transactions of another writer.
    expect(f.tries()).toBeGreaterThanOrEqual(Math.floor(20 / retryMaxMs));
  });

  it('tries exactly once with busyTimeoutMs 0', () => {
    const f = fakeLock(0, [Number.POSITIVE_INFINITY]);
    expect(f.lock.acquire()).toBe(false);
    expect(f.tries()).toBe(1);
    expect(f.slept).toEqual([]);
  });

  it('takes a shorter limit for one acquisition when asked (snapshot writes)', () => {
    const f = fakeLock(5_000, [Number.POSITIVE_INFINITY]);
    expect(f.lock.acquire(3)).toBe(false);
    expect(f.slept.reduce((a, b) => a + b, 0)).toBeCloseTo(3, 9);
  });
});

describe('handing the lock off under contention', () => {
  it('keeps the lock for consecutive batches within its turn', () => {
    const f = fakeLock(5_000, [2]);
    f.lock.acquire();
    f.lock.released(false);
    f.slept.length = 0;
    expect(f.lock.acquire()).toBe(true);
    expect(f.slept).toEqual([]);
  });

  it('stays off the lock for the hand-off once a turn that had to wait is over', () => {
    const f = fakeLock(5_000, [2]);
    f.lock.acquire();
    f.advance(turnMs);
    f.lock.released(false);
    f.slept.length = 0;
    expect(f.lock.acquire()).toBe(true);
    expect(f.slept).toEqual([handoffMs]);
  });

  it('hands off after a turn whose transactions read events another writer appended', () => {
    const f = fakeLock(5_000);
    f.lock.acquire();
    f.advance(turnMs);
    f.lock.released(true);
    expect(f.lock.acquire()).toBe(true);
    expect(f.slept).toEqual([handoffMs]);
  });

  it('starts a new turn after the hand-off', () => {
    const f = fakeLock(5_000);
    f.lock.acquire();
    f.advance(turnMs);
    f.lock.released(true);
    f.lock.acquire();
    f.lock.released(true);
    f.slept.length = 0;
    expect(f.lock.acquire()).toBe(true);
    expect(f.slept).toEqual([]);
  });

  it('does not wait again when the hand-off has already passed', () => {
    const f = fakeLock(5_000);
    f.lock.acquire();
    f.advance(turnMs);
    f.lock.released(true);
    f.advance(handoffMs);
    expect(f.lock.acquire()).toBe(true);
    expect(f.slept).toEqual([]);
  });

  it('never hands off without competition: a lone writer keeps the lock', () => {
    const f = fakeLock(5_000);
    for (let i = 0; i < 5; i++) {
      expect(f.lock.acquire()).toBe(true);
      f.advance(turnMs);
      f.lock.released(false);
    }
    expect(f.slept).toEqual([]);
  });

  it('stops handing off once no other writer was seen for a while', () => {
    const f = fakeLock(5_000);
    f.lock.acquire();
    f.lock.released(true);
    f.advance(contendedForMs + 1);
    f.lock.acquire();
    f.advance(turnMs);
    f.lock.released(false);
    expect(f.lock.acquire()).toBe(true);
    expect(f.slept).toEqual([]);
  });

  it('never lets the hand-off outlast the wait limit', () => {
    const f = fakeLock(0.25);
    f.lock.acquire();
    f.advance(turnMs);
    f.lock.released(true);
    expect(f.lock.acquire()).toBe(true);
    expect(f.slept).toEqual([0.25]);
  });
});

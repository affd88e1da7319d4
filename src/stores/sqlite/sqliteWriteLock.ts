/**
 * Taking SQLite's single write lock (BEGIN IMMEDIATE) fairly among processes sharing one file.
 *
 * SQLite's own busy handler sleeps 1, 2, 5, … then 100 ms between tries, so a waiter probes a few
 * dozen times in 5 s while a writer that just committed re-takes the lock within microseconds: under
 * steady load a process can starve until it times out. Instead the store tries with busy_timeout 0
 * and retries here: short jittered sleeps (a waiter probes every ~1 ms, so it sees the lock free
 * between two transactions of another process), and a writer that has competition keeps the lock
 * for consecutive batches only for one turn (10 ms), then stays off it for a short hand-off so a
 * waiter gets in. Every wait stays bounded by `busyTimeoutMs` (or a shorter limit per call), after
 * which the caller sees SQLITE_BUSY (→ ledger_unavailable). Figures: docs/performance.md section 5.
 */

/** Tuning, in ms. Exported for the tests and docs/storage.md, which quote them. */
export const writeLockTiming = {
  /** Sleep between two tries: uniform in [retryMinMs, retryMaxMs] (jitter avoids lock-step probing). */
  retryMinMs: 0.5,
  retryMaxMs: 2,
  /** After a contended turn, how long this writer leaves the lock to the others. */
  handoffMs: 1,
  /** Under contention a writer keeps the lock for consecutive batches up to this long, then hands off. */
  turnMs: 10,
  /** A commit counts as contended for this long after the last sign of another writer. */
  contendedForMs: 100,
} as const;

export interface WriteLockDeps {
  /** One non-blocking BEGIN IMMEDIATE: true if taken, false if another writer holds the lock. */
  readonly tryBegin: () => boolean;
  readonly now: () => number;
  /** Blocks for `ms` (the decide-and-append step is synchronous; so was SQLite's busy handler). */
  readonly sleep: (ms: number) => void;
  readonly random: () => number;
}

const sleepCell = new Int32Array(new SharedArrayBuffer(4));

/** A bounded synchronous sleep that does not spin (works on Node's main thread and in workers). */
export function sleepSync(ms: number): void {
  if (ms > 0) Atomics.wait(sleepCell, 0, 0, ms);
}

export const systemDeps: Omit<WriteLockDeps, 'tryBegin'> = {
  now: () => performance.now(),
  sleep: sleepSync,
  random: Math.random,
};

export class WriteLock {
  /** Until when this writer stays off the lock (the hand-off after a contended commit). */
  private notBefore = Number.NEGATIVE_INFINITY;
  /** When this writer last saw another one (had to wait, or read events it did not write). */
  private lastContention = Number.NEGATIVE_INFINITY;
  /** When this writer's current turn began (its first acquisition after a hand-off). */
  private turnStart = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly busyTimeoutMs: number,
    private readonly deps: WriteLockDeps,
  ) {}

  /** Takes the lock, or returns false once `timeoutMs` (default `busyTimeoutMs`) has passed without it. */
  acquire(timeoutMs = this.busyTimeoutMs): boolean {
    const { now, sleep } = this.deps;
    const start = now();
    const deadline = start + timeoutMs;
    if (start < this.notBefore) sleep(Math.min(this.notBefore, deadline) - start);
    for (;;) {
      if (this.deps.tryBegin()) {
        if (this.turnStart === Number.NEGATIVE_INFINITY) this.turnStart = now();
        return true;
      }
      const t = now();
      this.lastContention = t;
      if (t >= deadline) return false;
      sleep(Math.min(this.retryDelay(), deadline - t));
    }
  }

  /** Call when the transaction ended; `sawOtherWriter`: it read events another writer appended. */
  released(sawOtherWriter: boolean): void {
    const t = this.deps.now();
    if (sawOtherWriter) this.lastContention = t;
    const contended = t - this.lastContention <= writeLockTiming.contendedForMs;
    if (contended && t - this.turnStart >= writeLockTiming.turnMs) {
      this.notBefore = t + writeLockTiming.handoffMs;
      this.turnStart = Number.NEGATIVE_INFINITY;
    } else if (!contended) this.notBefore = Number.NEGATIVE_INFINITY;
  }

  private retryDelay(): number {
    const { retryMinMs, retryMaxMs } = writeLockTiming;
    return retryMinMs + this.deps.random() * (retryMaxMs - retryMinMs);
  }
}

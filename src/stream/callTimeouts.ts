import { limits } from '../domain/limits';
import { readClock } from './readClock';

/** Schedules `callback` after `delayMs` of real time; returns what cancels it. Tests inject their own. */
export type SetTimer = (callback: () => void, delayMs: number) => () => void;

// setTimeout fires at once for delays past 2^31 − 1 ms (about 24.8 days): longer waits are done in steps.
const timerDelayMax = 2_147_483_647;

export const systemSetTimer: SetTimer = (callback, delayMs) => {
  const timer = setTimeout(callback, delayMs);
  timer.unref();
  return () => clearTimeout(timer);
};

/** The error a timed-out call's `ctx.signal` is aborted with and its `invoke` fails with. */
export function timeoutError(): DOMException {
  return new DOMException('the call did not settle within its callTimeoutMs', 'TimeoutError');
}

/**
 * One timer per call with a deadline, read against the ledger's clock (log time): a timer that wakes
 * early (a slow clock, an injected one, a step of a very long wait) waits again for what is left, so
 * the deadline is never asked for before the clock reaches it. `due(callId)` is the ledger's attempt
 * to settle the call: true when it is done (settled, by it or by anything else), false to try again
 * later (the store refused it), with a pause that doubles up to `settleRetryMaxMs`.
 */
export class CallTimeouts {
  private readonly timers = new Map<string, () => void>();
  private stopped = false;

  constructor(
    private readonly clock: () => number,
    private readonly setTimer: SetTimer,
    private readonly due: (callId: string) => Promise<boolean>,
  ) {}

  /** Arms (or re-arms) the call's timer for `deadline` of log time; `pauseMs` is the least wait (a retry's backoff). */
  schedule(callId: string, deadline: number, pauseMs = 0): void {
    if (this.stopped) return;
    this.cancel(callId);
    const now = readClock(this.clock);
    const left = now === undefined ? limits.settleRetryMaxMs : deadline - now;
    const delay = Math.min(timerDelayMax, Math.max(pauseMs, left, 0));
    const next = Math.min(limits.settleRetryMaxMs, Math.max(limits.settleRetryMinMs, pauseMs * 2));
    const cancel = this.setTimer(() => {
      if (this.timers.get(callId) !== cancel) return;
      this.timers.delete(callId);
      const at = readClock(this.clock);
      // Woken before the deadline by the clock's reckoning (or the clock failed): wait for the rest.
      if (at === undefined || at < deadline) return this.schedule(callId, deadline, at === undefined ? next : 1);
      void this.due(callId).then((done) => {
        if (!done) this.schedule(callId, deadline, next);
      });
    }, delay);
    this.timers.set(callId, cancel);
  }

  cancel(callId: string): void {
    const cancel = this.timers.get(callId);
    if (cancel === undefined) return;
    this.timers.delete(callId);
    cancel();
  }

  /** Cancels every timer; later `schedule` calls do nothing (the ledger is closing). */
  stop(): void {
    this.stopped = true;
    for (const cancel of this.timers.values()) cancel();
    this.timers.clear();
  }
}


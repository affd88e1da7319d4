import type { Command } from '../domain/commands';
import { limits } from '../domain/limits';
import { shardGet, shardValues } from '../domain/shardedMap';
import type { BatchLoop } from './batchLoop';
import type { BatchResult } from './batchRequest';
import { CallTimeouts, timeoutError, type SetTimer } from './callTimeouts';
import { readClock } from './readClock';
import type { RunningCalls } from './runningCalls';
import type { Settlements } from './settlements';

/**
 * Calls past their `callTimeoutMs`: a timer per call with a deadline asks the log to settle it as
 * timed out, and a call the log settled so (here or by another writer) is aborted where it runs.
 */
export class CallDeadlines {
  private readonly timers: CallTimeouts;

  constructor(
    private readonly loop: BatchLoop,
    private readonly settlements: Settlements,
    private readonly running: RunningCalls,
    private readonly clock: () => number,
    setTimer: SetTimer,
    private readonly refundOnError: boolean,
  ) {
    this.timers = new CallTimeouts(clock, setTimer, (callId) => this.timeOut(callId));
  }

  schedule(callId: string, deadline: number, pauseMs?: number): void {
    this.timers.schedule(callId, deadline, pauseMs);
  }

  cancel(callId: string): void {
    this.timers.cancel(callId);
  }

  stop(): void {
    this.timers.stop();
  }

  /** Arms a timer for every open call with a deadline (on open: what a crash or another writer left). */
  scheduleOpen(): void {
    for (const call of shardValues(this.loop.current.inFlight)) if (call.deadline !== undefined) this.timers.schedule(call.callId, call.deadline);
  }

  /** Times out every open call whose deadline has passed by the clock; resolves how many this did. */
  async runDue(): Promise<number> {
    const at = readClock(this.clock);
    if (at === undefined) return 0;
    const due: string[] = [];
    for (const call of shardValues(this.loop.current.inFlight)) if (call.deadline !== undefined && call.deadline <= at) due.push(call.callId);
    let timedOut = 0;
    await Promise.all(due.map(async (callId) => {
      this.timers.cancel(callId);
      const settled = await this.timeOut(callId, () => timedOut++);
      const deadline = shardGet(this.loop.current.inFlight, callId)?.deadline;
      if (!settled && deadline !== undefined) this.timers.schedule(callId, deadline, limits.settleRetryMinMs);
    }));
    return timedOut;
  }

  /** The log settled a call as timed out: if it runs here, abort its signal and let invoke answer. */
  timedOutHere(callId: string): void {
    this.timers.cancel(callId);
    const running = this.running.get(callId);
    if (running?.timedOut === undefined) return;
    const error = timeoutError();
    running.controller.abort(error);
    running.timedOut(error);
  }

  /**
   * Asks the log to settle a call as timed out: true when that call is no longer open (this did it,
   * or something settled it first), false when the store refused (try again later). A settlement this
   * ledger decided first and is still appending (or took over from the journal) wins: no timeout.
   */
  private timeOut(callId: string, onTimedOut?: () => void): Promise<boolean> {
    if (this.settlements.has(callId)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (result: BatchResult): void => {
        if (result.kind === 'unavailable') return resolve(false);
        if (result.kind === 'decided' && result.events[0]?.type === 'call.failed') onTimedOut?.();
        if (result.kind === 'refused' && result.decision.code === 'call_not_due') {
          // The clock went back since the timer looked: wait again for what the state says.
          const deadline = shardGet(this.loop.current.inFlight, callId)?.deadline;
          if (deadline !== undefined) this.timers.schedule(callId, deadline, limits.settleRetryMinMs);
        }
        resolve(true);
      };
      const command = (at: number): Command => ({ type: 'timeout', at, callId, refund: this.refundOnError });
      this.loop.submitAlways({ kind: 'host', command, done, queuedAt: this.loop.queuedAt() });
    });
  }
}

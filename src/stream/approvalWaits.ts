import type { EventOf, LedgerEvent } from '../domain/events';
import { shardGet } from '../domain/shardedMap';
import type { LedgerState } from '../domain/state';
import { CallTimeouts, type SetTimer } from './callTimeouts';

/** How a wait ended for the invoke holding it: approved (the call is in flight from then, with its call deadline), or not. */
export type WaitEnd =
  | { readonly kind: 'approved'; readonly deadline: number | undefined }
  | { readonly kind: 'denied' | 'timed_out' | 'revoked' | 'closed' };

/** While calls wait here on a shared synchronous store, how often other writers' events are folded (an `atc approve` elsewhere). */
export const approvalPollMs = 250;

/**
 * The invokes of this ledger object that wait for a person, and the deadlines of every pending
 * approval it knows (its own, and a reopened log's). The log decides; this only wakes the waiters
 * when the fold shows their approval resolved (here or by another process) or released by a
 * revocation, and asks the log to time an approval out once its deadline has come (as call
 * timeouts are: CallTimeouts, log time). Other writers' events are followed by polling, and only
 * while something waits.
 */
export class ApprovalWaits {
  private readonly waiting = new Map<string, (end: WaitEnd) => void>();
  private readonly deadlines: CallTimeouts;
  private poll: ReturnType<typeof setInterval> | undefined;
  private stopped = false;

  constructor(
    clock: () => number,
    setTimer: SetTimer,
    timeOut: (approvalId: string) => Promise<boolean>,
    /** Folds other writers' events (a shared synchronous store); undefined when the store folds them itself. */
    private readonly follow: (() => void) | undefined,
  ) {
    this.deadlines = new CallTimeouts(clock, setTimer, timeOut);
  }

  /** Arms the timeout of a pending approval (log time). */
  schedule(approvalId: string, deadline: number, pauseMs = 0): void {
    this.deadlines.schedule(approvalId, deadline, pauseMs);
  }

  /** Waits for the end of this approval; `state` is the state the request was committed into (or later). */
  wait(requested: EventOf<'approval.requested'>, state: LedgerState): Promise<WaitEnd> {
    if (this.stopped) return Promise.resolve({ kind: 'closed' });
    const already = endIn(state, requested.approvalId, requested.callId);
    if (already !== undefined) return Promise.resolve(already);
    this.schedule(requested.approvalId, requested.deadline);
    return new Promise((resolve) => {
      this.waiting.set(requested.approvalId, resolve);
      this.startPolling();
    });
  }

  /** Each committed event (this ledger's and other writers'), in order, with the state after them. */
  observe(event: LedgerEvent, state: LedgerState): void {
    if (event.type === 'approval.resolved') {
      this.deadlines.cancel(event.approvalId);
      this.finish(event.approvalId, event.outcome === 'approved' ? { kind: 'approved', deadline: event.deadline } : { kind: event.outcome });
    } else if (event.type === 'grant.revoked' && this.waiting.size > 0) {
      for (const approvalId of Array.from(this.waiting.keys())) {
        if (state.approvalsEnded !== undefined && shardGet(state.approvalsEnded, approvalId) === 'revoked') {
          this.deadlines.cancel(approvalId);
          this.finish(approvalId, { kind: 'revoked' });
        }
      }
    }
  }

  /** The ledger closes: waiters answer `closed` (their approvals stay pending in the log; a reopened ledger times them out). */
  stop(): void {
    this.stopped = true;
    this.deadlines.stop();
    for (const approvalId of Array.from(this.waiting.keys())) this.finish(approvalId, { kind: 'closed' });
  }

  private finish(approvalId: string, end: WaitEnd): void {
    const resolve = this.waiting.get(approvalId);
    if (resolve === undefined) return;
    this.waiting.delete(approvalId);
    if (this.waiting.size === 0) this.stopPolling();
    resolve(end);
  }

  /**
   * While an invoke waits, a ref'd interval keeps the process alive (a script awaiting a person must
   * not exit under it; the deadline bounds the wait) and, on a shared synchronous store, folds other
   * writers' events so an `atc approve` elsewhere is seen.
   */
  private startPolling(): void {
    if (this.poll !== undefined) return;
    const follow = this.follow;
    this.poll = setInterval(() => {
      try {
        follow?.();
      } catch {
        // A store failing for a moment: the next tick tries again; the wait itself is in the log.
      }
    }, approvalPollMs);
  }

  private stopPolling(): void {
    if (this.poll !== undefined) clearInterval(this.poll);
    this.poll = undefined;
  }
}

/** How an approval already ended in `state`, or undefined while it is pending. */
function endIn(state: LedgerState, approvalId: string, callId: string): WaitEnd | undefined {
  if (state.approvals !== undefined && shardGet(state.approvals, approvalId) !== undefined) return undefined;
  const end = state.approvalsEnded === undefined ? undefined : shardGet(state.approvalsEnded, approvalId);
  if (end === undefined) return { kind: 'closed' }; // not in this state at all: fail closed
  if (end === 'approved') return { kind: 'approved', deadline: shardGet(state.inFlight, callId)?.deadline };
  return { kind: end };
}

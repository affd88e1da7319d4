import type { Command } from '../domain/commands';
import type { EventOf, LedgerEvent } from '../domain/events';
import { limits } from '../domain/limits';
import { shardGet } from '../domain/shardedMap';
import type { BatchLoop } from './batchLoop';
import type { BatchResult } from './batchRequest';
import type { SetTimer } from './callTimeouts';
import { runHost } from './commandRequests';
import { readClock } from './readClock';
import { approvalRefusal, pendingApprovalViews, personDecision } from './approvalHost';
import type { ApproveOptions, ApproveOutcome, DenyOptions, DenyOutcome, PendingApprovalView } from './approvalTypes';
import { ApprovalWaits, type WaitEnd } from './approvalWaits';

/**
 * The ledger's approval room (docs/approvals.md): the host's `pendingApprovals` / `approve` / `deny`,
 * the waits of this process's invokes, and the timeouts of every pending approval it knows. The
 * decider decides; this queues the commands and wakes the waiters after each commit.
 */
export class ApprovalDesk {
  private readonly waits: ApprovalWaits;

  constructor(private readonly loop: BatchLoop, private readonly clock: () => number, setTimer: SetTimer, follow: (() => void) | undefined) {
    this.waits = new ApprovalWaits(clock, setTimer, (approvalId) => this.timeOut(approvalId), follow);
  }

  /** On open: approvals a closed (or crashed) ledger left pending are timed out when due. */
  scheduleOpen(): void {
    for (const pending of pendingApprovalViews(this.loop.current)) this.waits.schedule(pending.approvalId, pending.deadline);
  }

  pending(): readonly PendingApprovalView[] {
    return pendingApprovalViews(this.loop.current);
  }

  async approve(approvalId: string, options: ApproveOptions): Promise<ApproveOutcome> {
    return (await this.decide(personDecision(approvalId, 'approved', options, 'note'))) as ApproveOutcome;
  }

  async deny(approvalId: string, options: DenyOptions): Promise<DenyOutcome> {
    return (await this.decide(personDecision(approvalId, 'denied', options, 'reason'))) as DenyOutcome;
  }

  /** Waits for the end of a call's wait (the invoke that asked). */
  wait(requested: EventOf<'approval.requested'>): Promise<WaitEnd> {
    return this.waits.wait(requested, this.loop.current);
  }

  /** After each commit, each event in order. */
  observe(event: LedgerEvent): void {
    this.waits.observe(event, this.loop.current);
  }

  /** Times out every pending approval whose deadline the clock has reached; resolves how many this did. */
  async runDue(): Promise<number> {
    const at = readClock(this.clock);
    if (at === undefined) return 0;
    let timedOut = 0;
    for (const pending of pendingApprovalViews(this.loop.current)) {
      if (pending.deadline > at) continue;
      const before = this.loop.current.approvalsEnded;
      if ((await this.timeOut(pending.approvalId)) && this.loop.current.approvalsEnded !== before) timedOut++;
    }
    return timedOut;
  }

  /** The ledger closes: waiting invokes answer `ledger_unavailable`; their approvals stay pending in the log. */
  stop(): void {
    this.waits.stop();
  }

  private async decide(decision: ReturnType<typeof personDecision>): Promise<ApproveOutcome | DenyOutcome> {
    try {
      await runHost(this.loop, (at) => ({ ...decision, at }));
      return decision.outcome === 'approved' ? { status: 'approved' } : { status: 'denied' };
    } catch (error) {
      const reason = approvalRefusal(error);
      if (reason === undefined) throw error;
      return { status: 'refused', reason };
    }
  }

  /** Asks the log to time out an approval whose deadline has come: true when settled either way, false to retry (store refused). */
  private timeOut(approvalId: string): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (result: BatchResult): void => {
        if (result.kind === 'unavailable') return resolve(false);
        if (result.kind === 'refused' && result.decision.code === 'approval_not_due') {
          // The clock went back since the timer looked: wait again for what the state says.
          const approvals = this.loop.current.approvals;
          const pending = approvals === undefined ? undefined : shardGet(approvals, approvalId);
          if (pending !== undefined) this.waits.schedule(approvalId, pending.deadline, limits.settleRetryMinMs);
        }
        resolve(true);
      };
      const command = (at: number): Command => ({ type: 'resolveApproval', at, approvalId, outcome: 'timed_out' });
      this.loop.submitAlways({ kind: 'host', command, done, queuedAt: this.loop.queuedAt() });
    });
  }
}

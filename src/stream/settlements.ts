import type { Command } from '../domain/commands';
import { limits } from '../domain/limits';
import { shardGet } from '../domain/shardedMap';
import type { BatchLoop } from './batchLoop';
import type { BatchResult } from './batchRequest';
import { newJournalOwner } from './ids';
import { memoryJournal, storeJournal, type PendingSettlement, type SettlementJournal } from './ports/settlementJournal';

/** Journals of stores that bring none, per store object: a reopen in this process finds what a closed ledger kept. */
const processJournals = new WeakMap<object, SettlementJournal>();

function journalFor(store: object): SettlementJournal {
  const own = storeJournal(store);
  if (own !== undefined) return own;
  let journal = processJournals.get(store);
  if (journal === undefined) processJournals.set(store, (journal = memoryJournal()));
  return journal;
}

/**
 * Settlements that are never lost: each is appended with a bounded backoff for as long as the store
 * refuses it, and kept in a journal (outside the log) meanwhile, so the next open appends what a
 * closed or crashed ledger could not.
 */
export class Settlements {
  /** Settlements the store has not taken yet (kept in the journal too), and the loops retrying them. */
  private readonly unsettled = new Map<string, PendingSettlement>();
  private readonly settling = new Set<Promise<boolean>>();
  private readonly retryWakers = new Set<() => void>();
  private readonly journal: SettlementJournal;
  private readonly journalOwner = newJournalOwner();
  /** Whether the journal holds the current `unsettled` list (its last write succeeded). */
  journaled = true;

  constructor(
    private readonly loop: BatchLoop,
    store: object,
  ) {
    this.journal = journalFor(store);
  }

  /** Whether a settlement of this call is still being appended here. */
  has(callId: string): boolean {
    return this.unsettled.has(callId);
  }

  /** How many settlement loops still run (close waits for them). */
  get pending(): number {
    return this.settling.size;
  }

  /** Waits for the settlement loops running now. */
  async drain(): Promise<void> {
    await Promise.all(this.settling);
  }

  /**
   * Appends a settlement, retrying with a bounded backoff for as long as the store refuses it, so it
   * is never lost; resolves true once it is in the log (or the log already settled that call), false
   * when the ledger closed first (then the journal keeps it for the next open). It bypasses the
   * pending bound: settlements are bounded by admissions.
   */
  settle(pending: PendingSettlement, deadline?: number): Promise<boolean> {
    const settling = this.settleLoop(pending, deadline);
    this.settling.add(settling);
    void settling.finally(() => this.settling.delete(settling));
    return settling;
  }

  private async settleLoop(pending: PendingSettlement, deadline: number | undefined): Promise<boolean> {
    let pauseMs: number = limits.settleRetryMinMs;
    let triedWhileClosing = false;
    // Only the first attempt may find the deadline passed: a result the ledger had only once the
    // deadline came is the timeout. A retry carries a settlement decided before it, which wins.
    let dueAt = deadline;
    for (;;) {
      const result = await new Promise<BatchResult>((resolve) => {
        const due = dueAt;
        dueAt = undefined;
        this.loop.submitAlways({
          kind: 'host',
          command: (at) => (due !== undefined && at >= due ? { type: 'timeout', at, callId: pending.callId, refund: pending.refund } : settleCommand(at, pending)),
          done: resolve,
          queuedAt: this.loop.queuedAt(),
        });
      });
      // `refused` is `unknown_call`: the call is no longer in flight, someone recorded its settlement.
      if (result.kind !== 'unavailable') {
        this.setUnsettled(pending.callId, undefined);
        return true;
      }
      this.setUnsettled(pending.callId, pending);
      if (this.loop.closing) {
        if (triedWhileClosing) return false;
        triedWhileClosing = true;
        continue;
      }
      await this.retryPause(pauseMs);
      pauseMs = Math.min(pauseMs * 2, limits.settleRetryMaxMs);
    }
  }

  /** Records in the journal that a call's settlement is pending (or no longer is). */
  private setUnsettled(callId: string, pending: PendingSettlement | undefined): void {
    const had = this.unsettled.has(callId);
    if (pending === undefined) {
      if (!had) return;
      this.unsettled.delete(callId);
    } else {
      if (had && this.journaled) return;
      this.unsettled.set(callId, pending);
    }
    try {
      this.journal.keep(this.journalOwner, Array.from(this.unsettled.values()));
      this.journaled = true;
    } catch {
      this.journaled = false; // still retried in memory; the next change tries the journal again
    }
  }

  private retryPause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.retryWakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.retryWakers.add(wake);
    });
  }

  /** Settlements waiting out a backoff try again now (on close). */
  wakeRetries(): void {
    for (const wake of Array.from(this.retryWakers)) wake();
  }

  /** On open: takes over the settlements earlier ledger objects kept (closed, or crashed with a file journal) and appends them. */
  settleKept(): void {
    let kept: ReturnType<SettlementJournal['kept']>;
    try {
      kept = this.journal.kept();
    } catch {
      return;
    }
    for (const { owner, pending } of kept) {
      if (owner === this.journalOwner) continue;
      // Ours first (in the journal), then the old owner's list is dropped: a crash in between loses nothing.
      const open = pending.filter((p) => shardGet(this.loop.current.inFlight, p.callId) !== undefined && !this.unsettled.has(p.callId));
      for (const p of open) this.setUnsettled(p.callId, p);
      try {
        if (this.journaled) this.journal.keep(owner, []);
      } catch {
        // Left for a later open; settling twice is refused (unknown_call), so nothing doubles.
      }
      for (const p of open) void this.settle(p);
    }
  }
}

/**
 * The settle command for a pending settlement. Literals per case, no spread: this runs for every
 * call, and a spread of a conditional object took ≈ 4 % of a metered call's profile.
 */
function settleCommand(at: number, p: PendingSettlement): Command {
  const { callId, outcome, refund, report } = p;
  if (report === undefined) {
    if (p.cancelled === true) return { type: 'settle', at, callId, outcome, refund, cancelled: true };
    return { type: 'settle', at, callId, outcome, refund };
  }
  if (p.cancelled === true) return { type: 'settle', at, callId, outcome, refund, cancelled: true, report };
  return { type: 'settle', at, callId, outcome, refund, report };
}

/** A call's settlement as the journal keeps it (literals per case, as settleCommand). */
export function pendingSettlement(callId: string, outcome: 'completed' | 'failed', refund: boolean, cancelled: boolean, report: PendingSettlement['report']): PendingSettlement {
  if (report === undefined) return cancelled ? { callId, outcome, refund, cancelled: true } : { callId, outcome, refund };
  return cancelled ? { callId, outcome, refund, cancelled: true, report } : { callId, outcome, refund, report };
}

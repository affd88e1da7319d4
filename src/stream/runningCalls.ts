import { LedgerError } from '../errors';
import type { LazyAbort } from './lazyAbort';
import type { InvokeOutcome } from './types';

export interface Running {
  readonly grantId: string;
  /** The grant's ancestors (a child's call): revoking any of them aborts this call too. */
  readonly ancestors: readonly string[] | undefined;
  readonly controller: LazyAbort;
  /** Only for a call with a deadline: told when the log settled it as timed out (here or by another writer). */
  timedOut?: (error: DOMException) => void;
  /** Retries of this (keyed) call decided while it runs, waiting for its outcome; made by the first such retry. */
  retries?: ((outcome: InvokeOutcome<unknown>) => void)[];
}

/** The calls whose tools run in this process, by call id: aborted on revocation, awaited by `close`. */
export class RunningCalls {
  private readonly calls = new Map<string, Running>();
  /** Set while `close` waits for running tools: called when the last one has settled. */
  private whenNone: (() => void) | undefined;

  get size(): number {
    return this.calls.size;
  }

  get(callId: string): Running | undefined {
    return this.calls.get(callId);
  }

  add(callId: string, running: Running): void {
    this.calls.set(callId, running);
  }

  remove(callId: string): void {
    this.calls.delete(callId);
    if (this.calls.size === 0 && this.whenNone !== undefined) {
      const wake = this.whenNone;
      this.whenNone = undefined;
      wake();
    }
  }

  /** Resolves when the last running call has been removed. */
  noneRunning(): Promise<void> {
    return new Promise<void>((resolve) => (this.whenNone = resolve));
  }

  /** A revocation with abortInFlight: aborts every running call of the grant's subtree. */
  abortGrant(grantId: string): void {
    for (const running of this.calls.values()) {
      const inSubtree = running.grantId === grantId || (running.ancestors !== undefined && running.ancestors.includes(grantId));
      if (inSubtree && !running.controller.aborted) running.controller.abort(new LedgerError('ledger_unavailable', 'the grant was revoked'));
    }
  }
}

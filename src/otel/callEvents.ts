import type { LedgerEvent } from '../domain/events';

type DecisionLike = Extract<LedgerEvent, { type: 'call.admitted' | 'call.rejected' | 'call.replayed' }>;
type SettlementLike = Extract<LedgerEvent, { type: 'call.completed' | 'call.failed' }>;

/** What the log says about one call: its decision and, once settled, its settlement. */
export interface CallEvents {
  decision?: DecisionLike;
  settlement?: SettlementLike;
}

/**
 * The events of calls made through the instrumented `invoke`, kept from the moment they are
 * published (always before `invoke` resolves) until that `invoke` takes them. Only recorded while
 * such a call is running, and at most `max` calls at once (oldest dropped), so other writers'
 * calls and calls that never come back for theirs cannot grow it.
 */
export class CallEventIndex {
  private readonly byCall = new Map<string, CallEvents>();
  private running = 0;

  constructor(private readonly max: number) {}

  begin(): void {
    this.running++;
  }

  /** Ends one call and hands over what the log said about it (nothing for a call that threw). */
  end(callId: string | undefined): CallEvents | undefined {
    this.running--;
    const found = callId === undefined ? undefined : this.byCall.get(callId);
    if (callId !== undefined) this.byCall.delete(callId);
    // Map#clear allocates a new table even when empty: only when something is left behind.
    if (this.running === 0 && this.byCall.size > 0) this.byCall.clear();
    return found;
  }

  record(event: LedgerEvent): void {
    if (this.running === 0) return;
    switch (event.type) {
      case 'call.admitted':
      case 'call.rejected':
      case 'call.replayed':
        this.entry(event.callId).decision = event;
        return;
      case 'call.completed':
      case 'call.failed': {
        // A settlement whose decision was not recorded here belongs to a call made elsewhere.
        const known = this.byCall.get(event.callId);
        if (known !== undefined) known.settlement = event;
        return;
      }
      default:
        return;
    }
  }

  private entry(callId: string): CallEvents {
    let found = this.byCall.get(callId);
    if (found === undefined) {
      if (this.byCall.size >= this.max) {
        const oldest = this.byCall.keys().next();
        if (oldest.done !== true) this.byCall.delete(oldest.value);
      }
      found = {};
      this.byCall.set(callId, found);
    }
    return found;
  }
}

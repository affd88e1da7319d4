import type { LedgerEvent } from '../domain/events';
import type { CallApproval } from './approvalTelemetry';

type DecisionLike = Extract<LedgerEvent, { type: 'call.admitted' | 'call.rejected' | 'call.replayed' }>;
type SettlementLike = Extract<LedgerEvent, { type: 'call.completed' | 'call.failed' }>;
type ReplayedEvent = Extract<LedgerEvent, { type: 'call.replayed' }>;

/** What the log says about one call: its decision and, once settled, its settlement. */
export interface CallEvents {
  decision?: DecisionLike;
  settlement?: SettlementLike;
  /** Only for a call that waited for a person. */
  approval?: CallApproval;
}

/**
 * The events of calls made through the instrumented `invoke`, kept from the moment they are
 * published (always before `invoke` resolves) until that `invoke` takes them. Only recorded while
 * such a call is running, and at most `max` calls at once (oldest dropped), so other writers'
 * calls and calls that never come back for theirs cannot grow it.
 *
 * A retry answered by idempotency replay resolves with the *first* call's id, while the log's
 * `call.replayed` event has the retry's own id (never returned) and names the first in `replayOf`.
 * So replays are kept apart, by `replayOf`, first logged first taken: the retry's span gets the
 * seq and hash of a `call.replayed` event of its own, and never takes the first call's events.
 */
export class CallEventIndex {
  private readonly byCall = new Map<string, CallEvents>();
  private readonly replays = new Map<string, ReplayedEvent[]>();
  private running = 0;

  constructor(private readonly max: number) {}

  begin(): void {
    this.running++;
  }

  /** Ends one call and hands over what the log said about it (nothing for a call that threw). */
  end(callId: string | undefined, replayed: boolean): CallEvents | undefined {
    this.running--;
    let found: CallEvents | undefined;
    if (callId !== undefined) found = replayed ? this.takeReplay(callId) : this.take(callId);
    // Map#clear allocates a new table even when empty: only when something is left behind.
    if (this.running === 0) {
      if (this.byCall.size > 0) this.byCall.clear();
      if (this.replays.size > 0) this.replays.clear();
    }
    return found;
  }

  record(event: LedgerEvent): void {
    if (this.running === 0) return;
    switch (event.type) {
      case 'call.admitted':
      case 'call.rejected':
        this.entry(event.callId).decision = event;
        return;
      case 'call.replayed':
        this.recordReplay(event);
        return;
      case 'call.completed':
      case 'call.failed': {
        // A settlement whose decision was not recorded here belongs to a call made elsewhere.
        const known = this.byCall.get(event.callId);
        if (known !== undefined) known.settlement = event;
        return;
      }
      case 'approval.requested':
        // A wait is the call's decision to ask; its admission follows as `approval.resolved`.
        (this.entry(event.callId).approval ??= {}).requested = event;
        return;
      case 'approval.resolved': {
        const known = this.byCall.get(event.callId);
        if (known?.approval !== undefined) known.approval.resolved = event;
        return;
      }
      default:
        return;
    }
  }

  private take(callId: string): CallEvents | undefined {
    const found = this.byCall.get(callId);
    if (found !== undefined) this.byCall.delete(callId);
    return found;
  }

  private takeReplay(firstCallId: string): CallEvents | undefined {
    const queue = this.replays.get(firstCallId);
    const event = queue?.shift();
    if (queue !== undefined && queue.length === 0) this.replays.delete(firstCallId);
    return event === undefined ? undefined : { decision: event };
  }

  private recordReplay(event: ReplayedEvent): void {
    const queue = this.replays.get(event.replayOf);
    if (queue !== undefined) {
      if (queue.length < this.max) queue.push(event);
      return;
    }
    this.makeRoom();
    this.replays.set(event.replayOf, [event]);
  }

  private entry(callId: string): CallEvents {
    let found = this.byCall.get(callId);
    if (found === undefined) {
      this.makeRoom();
      found = {};
      this.byCall.set(callId, found);
    }
    return found;
  }

  /** Drops the oldest call (or replayed call) once `max` are held. */
  private makeRoom(): void {
    if (this.byCall.size + this.replays.size < this.max) return;
    const from = this.byCall.size > 0 ? this.byCall : this.replays;
    const oldest = from.keys().next();
    if (oldest.done !== true) from.delete(oldest.value);
  }
}

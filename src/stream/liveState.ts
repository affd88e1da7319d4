import type { LedgerEvent } from '../domain/events';
import type { LedgerState } from '../domain/state';
import { TransientState } from '../domain/transientState';

/**
 * Events applied at most between two freezes: bounds what undoing a failed batch re-folds, and how
 * long the nodes the open fold created stay referenced (pruned ones too): at 4,096 a sequential run
 * kept enough dead trie nodes alive to lose in GC what it saved in copies (docs/performance.md, 12).
 */
export const liveEventsMax = 256;

/**
 * The ledger's state across batches, for a store that neither shares its log with other writers nor
 * takes snapshots (the in-memory store, a plain EventStore): one `TransientState` kept open from
 * batch to batch instead of one per batch. The trie nodes a batch copied stay the ledger's own, and
 * later batches change them in place instead of copying and freezing them again (a sequential call
 * ≈ 8 % more per second and 11–13 % lower medians: docs/performance.md, scenario 12).
 *
 * `view` is for reads that finish before the next batch (`decide`, `usage`, `inFlight`); it may be
 * changed in place afterwards and must never be handed out. `frozen()` freezes what the batches
 * since the last freeze built and returns a state nothing changes any more (`state()` hands that
 * out). A batch whose append failed is undone by `rollback`: the state is folded again from the last
 * frozen one, with the events applied since then up to the batch (fewer than `liveEventsMax`: the
 * freeze comes after each batch that landed).
 */
export class LiveState {
  private transient: TransientState;
  private base: LedgerState;
  private since: LedgerEvent[] = [];

  constructor(start: LedgerState) {
    this.base = start;
    this.transient = new TransientState(start);
  }

  get view(): LedgerState {
    return this.transient.view;
  }

  apply(event: LedgerEvent): void {
    this.transient.apply(event);
    this.since.push(event);
  }

  /** Where a batch starts, for `rollback`. */
  mark(): number {
    return this.since.length;
  }

  /** Undoes every event applied after `mark`. */
  rollback(mark: number): void {
    if (mark >= this.since.length) return;
    const kept = this.since.slice(0, mark);
    this.transient = new TransientState(this.base);
    this.since = [];
    for (const event of kept) this.apply(event);
  }

  /** The state as it is now, frozen: nothing changes it afterwards (later batches copy what they change). */
  frozen(): LedgerState {
    this.base = this.transient.commit();
    this.since = [];
    return this.base;
  }

  /** After a batch that landed: freezes now and then, so that a rollback re-folds fewer than `liveEventsMax` events. */
  landed(): void {
    if (this.since.length >= liveEventsMax) this.frozen();
  }
}

import type { InvokeOutcome } from './types';

/**
 * Outcomes of the keyed calls this ledger object admitted, for their retries: the last `max`, the
 * oldest forgotten first. A ring of slots, one per keyed admission, each with the call's ordinal
 * (its call id's counter, ids.ts): admissions happen in call-id order (ids are taken as calls are
 * queued, and the stream decides in queue order), so the ring is sorted by ordinal and a retry finds
 * its slot by binary search. A Map keyed by call id, with a delete per eviction, cost ≈ 1.2 µs per
 * keyed call against ≈ 0.15 µs for two array stores (docs/performance.md §12); retries are rare.
 * Were the order ever broken, a lookup would miss and the retry be answered from the log without
 * the value, as for a forgotten one.
 */
export class HeldOutcomes {
  private readonly ordinals: number[] = [];
  private readonly outcomes: (InvokeOutcome<unknown> | undefined)[] = [];
  /** Keyed admissions so far: the next one takes slot `next % max`. */
  private next = 0;

  constructor(private readonly max: number) {}

  /** Takes the next slot for a keyed call just admitted; its outcome is filled in by `hold`. */
  reserve(ordinal: number): number {
    const slot = this.next % this.max;
    this.ordinals[slot] = ordinal;
    this.outcomes[slot] = undefined;
    this.next++;
    return slot;
  }

  /** Keeps the call's outcome, unless its slot has been taken by a newer admission meanwhile. */
  hold(slot: number, ordinal: number, outcome: InvokeOutcome<unknown>): void {
    if (this.ordinals[slot] === ordinal) this.outcomes[slot] = outcome;
  }

  /** The held outcome of the call with this ordinal, if it is among the last `max` admitted and has one. */
  get(ordinal: number): InvokeOutcome<unknown> | undefined {
    let lo = Math.max(0, this.next - this.max);
    let hi = this.next - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const at = this.ordinals[mid % this.max] as number;
      if (at === ordinal) return this.outcomes[mid % this.max];
      if (at < ordinal) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }
}

import type { LedgerEvent } from './events';
import { applyEvent } from './applyEvent';
import { OwnedNodes } from './shardedMapTransient';
import { OwnedWrites, type MapWrites, type WritableState } from './stateWrites';
import type { LedgerState } from './state';

// Nodes an edit created stay referenced until it commits (even ones it pruned again), so a long
// fold commits every so many events on its own; a commit changes nothing `view` shows.
const commitEvery = 4_096;

/**
 * A batch-local fold of events: the same `applyEvent` as `evolve`, except that the root and the sharded maps'
 * nodes it created itself are changed in place until `commit`, which freezes them. A batch of
 * events therefore copies each touched trie path once instead of once per event; records (tools,
 * grants, in-flight calls) are still new frozen values per change (records.ts), exactly as `evolve`
 * makes them.
 *
 * `view` is the state after the events applied so far, for `decide` to read between events; it is
 * valid only until the next `apply` (that may change it in place) and must not escape the batch.
 * The state the batch started from is never changed, so a batch whose append fails is just dropped.
 * `commit()` returns a frozen state deep-equal to folding the same events with `evolve`
 * (test/property/evolveBatch.test.ts).
 */
export class TransientState {
  /** The batch's mutable root, made on the first `apply` (a one-event batch then costs what `evolve` does). */
  private root: WritableState | undefined;
  private committed: LedgerState;
  private readonly owned = new OwnedNodes();
  /** `applyEvent`'s writes (stateWrites.ts) on the batch's own nodes. */
  private readonly ownedWrites: MapWrites = new OwnedWrites(this.owned);
  private sinceCommit = 0;

  constructor(start: LedgerState) {
    // Ownership is "not frozen" (shardedMapTransient.ts): a thawed state would be changed in place.
    if (
      !Object.isFrozen(start) || !Object.isFrozen(start.grants) || !Object.isFrozen(start.tokens) || !Object.isFrozen(start.inFlight) ||
      !Object.isFrozen(start.idempotencyBindings)
    ) {
      throw new TypeError('a transient fold needs a frozen state (evolve and snapshots produce one)');
    }
    this.committed = start;
  }

  get view(): LedgerState {
    return this.root ?? this.committed;
  }

  apply(event: LedgerEvent): void {
    applyEvent(this.root ?? (this.root = { ...this.committed }), this.ownedWrites, event);
    if (++this.sinceCommit === commitEvery) this.commit();
  }

  /** Freezes what the batch built and returns it; the transient carries on from there. */
  commit(): LedgerState {
    this.sinceCommit = 0;
    if (this.root === undefined) return this.committed;
    this.owned.freezeOwned();
    this.committed = Object.freeze(this.root);
    this.root = undefined;
    return this.committed;
  }
}

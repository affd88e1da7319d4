import type { LedgerEvent } from './events';
import type { MeterAmounts } from './events';
import { grantRecord, inFlightCall, meterRelease, refunds, revokedGrant, toolRecord, withCallUsage, withDescendant } from './records';
import { shardGet, type ShardedMap } from './shardedMap';
import { OwnedNodes, shardDeleteOwned, shardSetOwned } from './shardedMapTransient';
import { bindKey, failKey, type MapWrites } from './idempotencyFold';
import { failedStatus } from './idempotency';
import type { LedgerState } from './state';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

// Nodes an edit created stay referenced until it commits (even ones it pruned again), so a long
// fold commits every so many events on its own; a commit changes nothing `view` shows.
const commitEvery = 4_096;

/** How the key steps write in a batch: on the nodes and arrays the batch owns (one object per batch, not five closures). */
class OwnedWrites implements MapWrites {
  constructor(private readonly owned: OwnedNodes) {}
  put<V>(map: ShardedMap<V>, key: string, value: V, depth?: number): ShardedMap<V> {
    return shardSetOwned(map, key, value, this.owned, depth);
  }
  remove<V>(map: ShardedMap<V>, key: string, depth?: number): ShardedMap<V> {
    return shardDeleteOwned(map, key, this.owned, depth);
  }
  writable<T>(array: readonly T[]): T[] {
    return this.owned.own(array) as T[];
  }
  fresh<T>(): T[] {
    return this.owned.fresh([]) as T[];
  }
  done<T>(array: T[]): readonly T[] {
    return array;
  }
}

/**
 * A batch-local fold of events: `evolve` event by event, except that the root and the sharded maps'
 * nodes it created itself are changed in place until `commit`, which freezes them. A batch of
 * events therefore copies each touched trie path once instead of once per event; records (tools,
 * grants, in-flight calls) are still new frozen values per change (records.ts), exactly as `evolve`
 * makes them.
 *
 * `view` is the state after the events applied so far, for `decide` to read between events; it is
 * valid only until the next `apply` (that may change it in place) and must not escape the batch.
 * The state the batch started from is never changed, so a batch whose append fails is just dropped.
 * `commit()` returns a frozen state deep-equal to folding the same events with `evolve`
 * (test/evolveBatch.property.test.ts).
 */
export class TransientState {
  /** The batch's mutable root, made on the first `apply` (a one-event batch then costs what `evolve` does). */
  private root: Mutable<LedgerState> | undefined;
  private committed: LedgerState;
  private readonly owned = new OwnedNodes();
  /** `evolve`'s key-binding steps (idempotencyFold.ts), writing the batch's own nodes. */
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
    this.applyOne(event);
    if (++this.sinceCommit === commitEvery) this.commit();
  }

  private applyOne(event: LedgerEvent): void {
    const s = this.root ?? (this.root = { ...this.committed });
    s.head = Object.freeze({ seq: event.seq, hash: event.hash });
    switch (event.type) {
      case 'tool.registered':
        s.tools = Object.freeze({ ...s.tools, [event.tool]: toolRecord(event) });
        return;
      case 'grant.issued': {
        const record = grantRecord(event, event.parentGrantId === undefined ? undefined : shardGet(s.grants, event.parentGrantId));
        s.grants = shardSetOwned(s.grants, event.grantId, record, this.owned);
        // As in `evolve`: a child counts against its root's bound on delegated grants.
        const root = record.ancestors === undefined ? undefined : shardGet(s.grants, record.ancestors[0] as string);
        if (root !== undefined) s.grants = shardSetOwned(s.grants, root.grantId, withDescendant(root), this.owned);
        s.tokens = shardSetOwned(s.tokens, event.tokenDigest, event.grantId, this.owned);
        return;
      }
      case 'grant.revoked': {
        const grant = shardGet(s.grants, event.grantId);
        if (grant !== undefined) s.grants = shardSetOwned(s.grants, event.grantId, revokedGrant(grant), this.owned);
        return;
      }
      case 'call.admitted': {
        this.charge(s, event.grantId, event.reserved.calls, event.reserved.inputBytes, event.reserved.meters, 1, event.at);
        const call = inFlightCall(event);
        s.inFlight = shardSetOwned(s.inFlight, event.callId, call, this.owned);
        if (call.key !== undefined) bindKey(s, this.ownedWrites, event);
        return;
      }
      case 'call.rejected':
      case 'call.replayed':
      case 'fetch.hop':
        return;
      case 'call.completed': {
        // As in `evolve`: a metered call releases what it reserved beyond its charge.
        const call = shardGet(s.inFlight, event.callId);
        const release = event.charged === undefined ? undefined : meterRelease(call, event.charged);
        s.inFlight = shardDeleteOwned(s.inFlight, event.callId, this.owned);
        if (release !== undefined) this.charge(s, event.grantId, 0, 0, release, -1, undefined);
        // As in `evolve`: a completed keyed call's binding needs no write.
        return;
      }
      case 'call.failed': {
        const call = shardGet(s.inFlight, event.callId);
        const release = event.charged === undefined ? undefined : meterRelease(call, event.charged);
        s.inFlight = shardDeleteOwned(s.inFlight, event.callId, this.owned);
        const back = refunds(event);
        if (back || release !== undefined) this.charge(s, event.grantId, back ? -event.refunded.calls : 0, back ? -event.refunded.inputBytes : 0, release, -1, undefined);
        if (call?.key !== undefined) s.idempotencyBindings = failKey(s.idempotencyBindings, this.ownedWrites, call.key, call.grantId, event.callId, failedStatus(event));
        return;
      }
      case 'attenuation.rejected':
      case 'revocation.rejected':
        return;
    }
  }

  /** `evolve`'s chain charge (evolve.ts), on the batch's own nodes: the grant, then each ancestor it names. */
  private charge(s: Mutable<LedgerState>, grantId: string, calls: number, inputBytes: number, meters: MeterAmounts | undefined, sign: 1 | -1, admittedAt: number | undefined): void {
    const grant = shardGet(s.grants, grantId);
    if (grant === undefined) return;
    s.grants = shardSetOwned(s.grants, grantId, withCallUsage(grant, calls, inputBytes, meters, sign, admittedAt), this.owned);
    if (grant.ancestors === undefined) return;
    for (const id of grant.ancestors) {
      const ancestor = shardGet(s.grants, id);
      if (ancestor !== undefined) s.grants = shardSetOwned(s.grants, id, withCallUsage(ancestor, calls, inputBytes, meters, sign, admittedAt), this.owned);
    }
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

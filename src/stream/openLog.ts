import { freeze } from 'immer';
import { eventHash } from '../domain/chain';
import type { LedgerEvent } from '../domain/events';
import { initialState, type LedgerState } from '../domain/state';
import { TransientState } from '../domain/transientState';
import { LedgerError } from '../errors';
import { isEventHashSource, isSnapshotEventStore, type AsyncEventStore, type EventStore } from './ports/eventStore';
import type { LogFollower } from './ports/logFollower';

/**
 * Rebuilds the state from a store's log, refusing one whose sequence or hash chain does not verify.
 * A snapshotting store supplies a trusted state at some seq; then only the events after it are read
 * and checked.
 */
export function openLog(store: EventStore): LedgerState {
  const opened = openLogFrom(store);
  if (isSnapshotEventStore(store)) store.offerSnapshot(opened.state);
  return opened.state;
}

/**
 * openLog, then opens the follower (it may refuse by throwing) with the snapshot the state came from
 * and what the follower saved beside it; the snapshot offered after open carries the follower's text.
 */
export function openLogWithFollower(store: EventStore, follower: LogFollower | undefined): LedgerState {
  if (follower === undefined) return openLog(store);
  const { state, snapshotSeq } = openLogFrom(store);
  const snapshots = isSnapshotEventStore(store) ? store : undefined;
  const text = snapshotSeq === undefined ? undefined : snapshots?.snapshotFollowerText?.(snapshotSeq);
  follower.open({ head: state.head, snapshot: snapshotSeq === undefined ? undefined : { seq: snapshotSeq, text }, hashes: (after, through) => eventHashes(store, after, through) });
  snapshots?.offerSnapshot(state, follower.snapshotText === undefined ? undefined : () => (follower.snapshotText as () => string).call(follower));
  return state;
}

/**
 * Opens the follower of a ledger on an asynchronous store (openLedger) over the events it loaded:
 * no snapshot text (such a store keeps none for followers), so the follower rebuilds from them.
 */
export function openFollowerOnEvents(follower: LogFollower, state: LedgerState, events: readonly LedgerEvent[]): void {
  follower.open({
    head: state.head,
    snapshot: undefined,
    hashes: function* (afterSeq, throughSeq) {
      for (let seq = Math.max(afterSeq, 0) + 1; seq <= Math.min(throughSeq, events.length); seq++) yield (events[seq - 1] as LedgerEvent).hash;
    },
  });
}

function* eventHashes(store: EventStore, afterSeq: number, throughSeq: number): Generator<string> {
  if (throughSeq <= afterSeq) return;
  if (isEventHashSource(store)) {
    yield* store.eventHashes(afterSeq, throughSeq);
    return;
  }
  for (const event of store.load()) {
    if (event.seq > throughSeq) return;
    if (event.seq > afterSeq) yield event.hash;
  }
}

/** The same, without offering a snapshot, also telling which snapshot it started from. */
export function openLogFrom(store: EventStore): { readonly state: LedgerState; readonly snapshotSeq: number | undefined } {
  const snapshots = isSnapshotEventStore(store) ? store : undefined;
  const snapshot = snapshots?.latestSnapshot();
  if (snapshot !== undefined && snapshots !== undefined) {
    try {
      return { state: foldChecked(startOf(snapshot), snapshots.loadAfter(snapshot.head.seq)), snapshotSeq: snapshot.head.seq };
    } catch {
      // A snapshot that cannot be folded on (a wrong shape the store did not catch) is only a cache:
      // replay the whole log instead, which reports the real problem if there is one.
      return { state: foldChecked(initialState, store.load()), snapshotSeq: undefined };
    }
  }
  return { state: foldChecked(initialState, store.load()), snapshotSeq: undefined };
}

/**
 * The same for an asynchronous store. It also returns every stored event: a ledger on such a store
 * answers `events()` synchronously from this copy (kept up to date as it folds).
 */
export async function openLogAsync(store: AsyncEventStore): Promise<{ readonly state: LedgerState; readonly events: LedgerEvent[] }> {
  const snapshot = await store.latestSnapshot();
  const events = (await store.readAfter(0)) as LedgerEvent[];
  const from = snapshot === undefined ? 0 : snapshot.head.seq;
  // The snapshot is bound to the stored event at its seq (the store checks its head hash): only the
  // events after it are folded and checked here.
  const state = foldChecked(startOf(snapshot), from === 0 ? events : events.slice(from));
  if (snapshot !== undefined && events[from - 1]?.hash !== snapshot.head.hash) throw new LedgerError('invalid_log', `the snapshot at seq ${from} does not match the stored log`);
  store.offerSnapshot(state);
  return { state, events };
}

// Batch folds change only nodes that are not frozen yet (transientState.ts): a store's snapshot
// must come frozen; immer's deep freeze returns at once when it already is.
function startOf(snapshot: LedgerState | undefined): LedgerState {
  return snapshot === undefined ? initialState : freeze(snapshot, true);
}

function foldChecked(start: LedgerState, events: Iterable<LedgerEvent>): LedgerState {
  // One batch fold (each trie path copied once per few thousand events), equal to folding `evolve`.
  const fold = new TransientState(start);
  // Stored events are untrusted (a file anyone may edit): anything that is not a well-formed event,
  // a body that is not JSON, or a value that makes hashing or folding throw is `invalid_log`.
  try {
    for (const event of events) {
      const head = fold.view.head;
      if (event === null || typeof event !== 'object') throw new LedgerError('invalid_log', `the stored event after seq ${head.seq} is not an event`);
      if (event.seq !== head.seq + 1) throw new LedgerError('invalid_log', `stored log is out of sequence: expected seq ${head.seq + 1}, found seq ${String(event.seq)}`);
      if (event.prevHash !== head.hash || eventHash(event) !== event.hash) throw new LedgerError('invalid_log', `stored log's hash chain breaks at seq ${event.seq}`);
      fold.apply(event);
    }
  } catch (error) {
    if (error instanceof LedgerError) throw error.code === 'invalid_log' ? error : new LedgerError('invalid_log', `${error.message} (after seq ${fold.view.head.seq})`, { cause: error });
    throw new LedgerError('invalid_log', `the stored event after seq ${fold.view.head.seq} cannot be read or folded`, { cause: error });
  }
  return fold.commit();
}

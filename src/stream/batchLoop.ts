import type { LedgerEvent } from '../domain/events';
import type { LedgerState } from '../domain/state';
import { limits } from '../domain/limits';
import { LedgerError } from '../errors';
import type { BatchResult, Request } from './batchRequest';
import { CommandStream } from './commandStream';
import { decideBatch, type BatchDecided, type BatchDecider } from './decideBatch';
import { foldForeign } from './foldForeign';
import { LiveState } from './liveState';
import { openLogWithFollower } from './openLog';
import { isSharedEventStore, isSnapshotEventStore, type AsyncEventStore, type EventStore } from './ports/eventStore';
import type { LogFollower } from './ports/logFollower';

/** What an asynchronous store held when `openLedger` opened it. */
export interface OpenedAsync {
  readonly store: AsyncEventStore;
  readonly state: LedgerState;
  readonly events: LedgerEvent[];
}

export interface BatchLoopOptions {
  readonly pendingMax: number;
  readonly decider: BatchDecider;
  readonly follower: LogFollower | undefined;
  /** Told every committed event, in log order (foreign ones first). */
  readonly publish: (events: readonly LedgerEvent[]) => void;
}

/**
 * The serialized command loop and the state it owns: batches from the command stream are decided
 * on one path (decideBatch.ts) and committed by one of two strategies, a synchronous store (one
 * append, or one `exclusive` on a shared store) or an asynchronous one (one write transaction), which
 * share what happens after the commit.
 */
export class BatchLoop {
  /** The state after every event folded: frozen, or (with `live`) its view, never handed out unfrozen. */
  current: LedgerState;
  /** Set by `close`: no more catch-ups. */
  closing = false;
  /** On a store that neither shares its log nor takes snapshots: the state kept open across batches (liveState.ts). */
  private readonly live: LiveState | undefined;
  /** With an asynchronous store: every event folded so far, for `events()`. */
  private readonly folded: LedgerEvent[] | undefined;
  private readonly stream: CommandStream<Request>;
  private readonly catchUpTimer: ReturnType<typeof setInterval> | undefined;
  private catchUpQueued = false;
  /** The follower's text for a snapshot, read only when one is written. */
  private readonly followerText: (() => string) | undefined;

  constructor(
    /** Exactly one of the two is set: a synchronous store, or an asynchronous one (openLedger). */
    readonly store: EventStore | undefined,
    private readonly opened: OpenedAsync | undefined,
    private readonly options: BatchLoopOptions,
  ) {
    const follower = options.follower;
    this.followerText = follower?.snapshotText !== undefined ? () => (follower.snapshotText as () => string).call(follower) : undefined;
    this.current = opened?.state ?? openLogWithFollower(store as EventStore, follower);
    this.live = store !== undefined && !isSharedEventStore(store) && !isSnapshotEventStore(store) ? new LiveState(this.current) : undefined;
    this.folded = opened?.events;
    const asyncStore = opened?.store;
    const syncStore = store as EventStore;
    this.stream = new CommandStream<Request>(
      options.pendingMax,
      limits.batchCommandsMax,
      asyncStore !== undefined ? (batch) => this.processBatchAsync(asyncStore, batch) : (batch) => this.processBatch(syncStore, batch),
      asyncStore === undefined && syncStore.gathersBatches === true,
    );
    if (asyncStore !== undefined) {
      this.catchUpTimer = setInterval(() => this.queueCatchUp(), asyncStore.catchUpIntervalMs);
      this.catchUpTimer.unref();
    }
  }

  /** Queues a request unless the pending bound is reached (then false). */
  submit(request: Request): boolean {
    return this.stream.submit(request);
  }

  /** Queues a request past the pending bound (settlements, timeouts: bounded by admissions). */
  submitAlways(request: Request): void {
    this.stream.submitAlways(request);
  }

  /** When a request was queued, for an asynchronous store's deadline (the synchronous path needs none). */
  queuedAt(): number {
    return this.opened === undefined ? 0 : performance.now();
  }

  idle(): Promise<void> {
    return this.stream.idle();
  }

  /** Stops the stream and the catch-up timer. */
  stop(): void {
    this.stream.stop();
    if (this.catchUpTimer !== undefined) clearInterval(this.catchUpTimer);
  }

  async closeStore(): Promise<void> {
    if (this.opened !== undefined) await this.opened.store.close();
    else this.store?.close?.();
  }

  /** The state handed out: frozen, so later batches copy what they change instead of changing it in place. */
  frozenState(): LedgerState {
    if (this.live !== undefined) this.current = this.live.frozen();
    return this.current;
  }

  /** The whole log, as folded (asynchronous store) or as the store loads it. */
  events(): readonly LedgerEvent[] {
    if (this.folded !== undefined) return Object.freeze(this.folded.slice());
    try {
      return Object.freeze(Array.from((this.store as EventStore).load()));
    } catch (cause) {
      // e.g. better-sqlite3's TypeError once the store's connection is closed
      if (cause instanceof LedgerError) throw cause;
      throw this.closing ? new LedgerError('closed', 'the ledger is closed: its store no longer reads', { cause }) : new LedgerError('store_failed', 'the store could not read the log', { cause });
    }
  }

  /** With a shared store, folds what other writers appended since this ledger last looked. */
  catchUp(): void {
    if (this.store === undefined || !isSharedEventStore(this.store) || this.closing) return;
    const foreign = this.store.readAfter(this.current.head.seq);
    if (foreign.length === 0) return;
    this.current = foldForeign(this.current, foreign);
    this.options.publish(foreign);
  }

  /** Decides a whole batch against a working state, appends its events in one store call, then commits. */
  private processBatch(store: EventStore, batch: Request[]): void {
    let foreign: readonly LedgerEvent[] = [];
    let decided: BatchDecided | undefined;
    const mark = this.live?.mark();
    try {
      const decideAll = (caughtUp: readonly LedgerEvent[]): void => {
        foreign = caughtUp;
        decided = decideBatch(this.options.decider, foldForeign(this.current, caughtUp), this.live, batch);
        if (decided.sealed.length > 0) store.append(decided.sealed);
      };
      if (isSharedEventStore(store)) store.exclusive(this.current.head.seq, decideAll);
      else decideAll([]);
    } catch (cause) {
      // What the batch applied in place is undone: the state is again the one before it. Foreign
      // events were read inside a transaction that failed: they are re-read next time.
      if (this.live !== undefined && mark !== undefined) {
        this.live.rollback(mark);
        this.current = this.live.view;
      }
      failAll(batch, cause);
      return;
    }
    if (decided === undefined) return;
    this.land(decided, foreign, batch);
    if (decided.sealed.length > 0 && isSnapshotEventStore(store)) store.offerSnapshot(this.current, this.followerText);
  }

  /**
   * The same on an asynchronous store: one write transaction decides and appends the batch after
   * folding other writers' events; a batch of catch-up requests only reads. The batch's deadline
   * runs from its oldest request, so time spent queued behind a stalled batch counts.
   */
  private async processBatchAsync(store: AsyncEventStore, batch: Request[]): Promise<void> {
    let foreign: readonly LedgerEvent[] = [];
    let decided: BatchDecided | undefined;
    const deadline = batch.reduce((oldest, r) => Math.min(oldest, r.queuedAt), Infinity) + store.timeoutMs;
    // A catch-up batched with commands is done by their transaction: either way the next may be queued
    // (left set, the periodic fold of other writers' events would stop for good).
    if (batch.some((r) => r.kind === 'catchUp')) this.catchUpQueued = false;
    try {
      if (batch.every((r) => r.kind === 'catchUp')) {
        foreign = await store.readAfter(this.current.head.seq, this.current.head.hash);
        decided = { state: foldForeign(this.current, foreign), sealed: [], results: batch.map(() => ({ kind: 'decided', events: [] })) };
      } else {
        const decideAll = (caughtUp: readonly LedgerEvent[]): readonly LedgerEvent[] => {
          foreign = caughtUp;
          decided = decideBatch(this.options.decider, foldForeign(this.current, caughtUp), undefined, batch);
          return decided.sealed;
        };
        await store.exclusive(this.current.head.seq, decideAll, deadline, this.current.head.hash);
      }
    } catch (cause) {
      failAll(batch, cause);
      return;
    }
    if (decided === undefined) return;
    this.land(decided, foreign, batch);
    if (decided.sealed.length > 0 || foreign.length > 0) store.offerSnapshot(this.current);
  }

  /** After either commit: the new state, the events published (foreign first), each request told. */
  private land(decided: BatchDecided, foreign: readonly LedgerEvent[], batch: readonly Request[]): void {
    this.current = decided.state;
    this.live?.landed();
    if (this.folded !== undefined) {
      for (const event of foreign) this.folded.push(event);
      for (const event of decided.sealed) this.folded.push(event);
    }
    this.options.publish(foreign);
    this.options.publish(decided.sealed);
    for (let i = 0; i < batch.length; i++) (batch[i] as Request).done(decided.results[i] as BatchResult);
  }

  /** Queues one catch-up when the stream has nothing else to do (any batch catches up anyway). */
  private queueCatchUp(): void {
    if (this.closing || this.catchUpQueued || this.stream.pending > 0) return;
    this.catchUpQueued = true;
    this.stream.submitAlways({ kind: 'catchUp', done: () => undefined, queuedAt: this.queuedAt() });
  }
}

function failAll(batch: readonly Request[], cause: unknown): void {
  for (const request of batch) request.done({ kind: 'unavailable', cause });
}

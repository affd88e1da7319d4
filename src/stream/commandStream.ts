import { Subject, filter, map, type Subscription } from 'rxjs';
import { BoundedQueue } from './boundedQueue';

/**
 * The single serialized command stream. Requests wait in a bounded ring queue; drains are pushed
 * through one RxJS pipeline that takes up to `batchMax` requests at a time and hands them to
 * `processBatch`, which decides and appends them synchronously. Only one batch runs at a time (JS
 * runs the pipeline to completion before the next drain), so every decision sees the state left by
 * the one before it: admission is atomic. A batch is one store append: group commit.
 * With an asynchronous store `processBatch` returns a promise, and the next batch waits for it.
 */
export class CommandStream<Request> {
  private readonly queue: BoundedQueue<Request>;
  private readonly drains$ = new Subject<void>();
  private readonly subscription: Subscription;
  private scheduled = false;
  /** The batch an asynchronous `processBatch` is still working on. */
  private running: Promise<void> | undefined;
  private idleWaiters: (() => void)[] = [];

  constructor(
    capacity: number,
    private readonly batchMax: number,
    processBatch: (batch: Request[]) => void | Promise<void>,
    /** Start every batch after a turn of the event loop, not on a microtask (the store asked for group commit). */
    private readonly gather = false,
  ) {
    this.queue = new BoundedQueue<Request>(capacity);
    this.subscription = this.drains$
      .pipe(
        map(() => this.take()),
        filter((batch) => batch.length > 0),
      )
      .subscribe((batch) => {
        const result = processBatch(batch);
        if (result !== undefined) this.running = result;
      });
  }

  get pending(): number {
    return this.queue.length;
  }

  /** Queues a request; false when the queue is at capacity (the caller fails closed). */
  submit(request: Request): boolean {
    if (!this.queue.push(request)) return false;
    this.schedule(false);
    return true;
  }

  /** Queues a request that must not be dropped, even past capacity (settling an admitted call). */
  submitAlways(request: Request): void {
    this.queue.forcePush(request);
    this.schedule(false);
  }

  /** Resolves when the queue is empty. */
  idle(): Promise<void> {
    if (this.queue.length === 0 && !this.scheduled && this.running === undefined) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  stop(): void {
    this.subscription.unsubscribe();
    this.drains$.complete();
  }

  private take(): Request[] {
    const n = Math.min(this.batchMax, this.queue.length);
    const batch = new Array<Request>(n);
    for (let i = 0; i < n; i++) batch[i] = this.queue.shift() as Request;
    return batch;
  }

  // The first drain runs on a microtask (low latency); follow-up drains of a long queue yield to the
  // event loop so tools, timers and I/O progress between batches. With group commit the first drain
  // yields too: the requests that reach the process in one poll of the event loop (each in its own
  // callback) then share one batch and one flush, instead of a flush each.
  private schedule(yieldFirst: boolean): void {
    if (this.scheduled || this.running !== undefined) return;
    this.scheduled = true;
    const run = (): void => {
      this.scheduled = false;
      this.drains$.next();
      const running = this.running;
      if (running !== undefined) {
        // processBatch handles its own failures; the stream only waits for it to end.
        void running.then(() => this.afterAsyncBatch(), () => this.afterAsyncBatch());
        return;
      }
      if (this.queue.length > 0) this.schedule(true);
      else this.wakeIdle();
    };
    if (yieldFirst || this.gather) setImmediate(run);
    else queueMicrotask(run);
  }

  private wakeIdle(): void {
    if (this.idleWaiters.length === 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  private afterAsyncBatch(): void {
    this.running = undefined;
    if (this.queue.length > 0) this.schedule(false);
    else this.wakeIdle();
  }
}

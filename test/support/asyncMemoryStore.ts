import type { AsyncEventStore, LedgerEvent, LedgerState } from '../../src';

/**
 * A test-only asynchronous store over an array shared by several ledgers (as hosts share a database):
 * `exclusive` runs one at a time, and `failNext` makes the next transactions fail as a lost server would.
 */
export class AsyncMemoryStore implements AsyncEventStore {
  readonly kind = 'async';
  failNext = 0;
  readonly deadlines: number[] = [];
  /** Resolved by the test to let a held transaction finish. */
  hold: Promise<void> | undefined;
  private tail: Promise<void> = Promise.resolve();

  constructor(
    readonly log: LedgerEvent[] = [],
    readonly timeoutMs = 10_000,
    readonly catchUpIntervalMs = 20,
  ) {}

  async open(): Promise<void> {}
  async latestSnapshot(): Promise<LedgerState | undefined> {
    return undefined;
  }
  async readAfter(afterSeq: number): Promise<readonly LedgerEvent[]> {
    return this.log.slice(afterSeq);
  }
  exclusive(afterSeq: number, decide: (foreign: readonly LedgerEvent[]) => readonly LedgerEvent[], deadline: number): Promise<void> {
    this.deadlines.push(deadline);
    const run = this.tail.then(async () => {
      if (this.hold !== undefined) await this.hold;
      if (this.failNext > 0) {
        this.failNext--;
        throw Object.assign(new Error('connection refused'), { code: 'ECONNREFUSED' });
      }
      const events = decide(this.log.slice(afterSeq));
      this.log.push(...events);
    });
    this.tail = run.catch(() => undefined);
    return run;
  }
  offerSnapshot(): void {}
  async close(): Promise<void> {}
}

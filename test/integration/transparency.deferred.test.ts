// The checkpoint publisher integrates committed events into its tree off the commit path: the
// commit only queues them; a scheduled integration (default setImmediate) hashes them in log order
// and signs each checkpoint that falls due; every read of the tree integrates the queue first; a
// queue that reaches integrationQueueMax is integrated at once. By default the integration is batched:
// one unref'd timer per integrationDelayMs, brought forward to setImmediate when a checkpoint is due.
import { createHash } from 'node:crypto';
import { createLedger, type Ledger, type LedgerEvent } from '../../src';
import {
  checkpointPublisher,
  generateSignerKey,
  integrationDelayMs,
  integrationQueueMax,
  merkleHasher,
  nodeCrypto,
  rootOfEventHashes,
  type CheckpointPublisher,
  type PublishedCheckpoint,
  type TransparencySigner,
} from '../../src/transparency';

const hour = 3_600_000;
const hasher = merkleHasher(nodeCrypto);
const key = generateSignerKey(nodeCrypto, 'example.com/ledger');
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

/** Registers a tool, issues a grant and makes `calls` calls (2 events each): 2 + 2·calls events. */
async function drive(ledger: Ledger, calls: number): Promise<void> {
  await ledger.registerTool({ name: 'noop', inputSchema: { type: 'object', properties: { i: { type: 'number' } } }, run: () => null });
  const { token } = await ledger.issue({ tools: ['noop'], expiresAt: Date.now() + hour, budget: { calls: 10_000, inputBytes: 1_000_000 } });
  for (let i = 0; i < calls; i++) await ledger.invoke(token, 'noop', { i });
}

function rootOf(events: readonly LedgerEvent[], size: number): string {
  return hex(rootOfEventHashes(hasher, events.slice(0, size).map((e) => e.hash)).root);
}

/** A scheduler that runs nothing until `run()` (what setImmediate would run later). */
function manualSchedule(): { readonly schedule: (fn: () => void) => void; run: () => number } {
  let due: (() => void)[] = [];
  return {
    schedule: (fn) => void due.push(fn),
    run: () => {
      const now = due;
      due = [];
      for (const fn of now) fn();
      return now.length;
    },
  };
}

/** A publisher on an empty log, fed synthetic events directly (no ledger). */
function bare(options: { everyEvents: number; schedule: (fn: () => void) => void; sink?: (p: PublishedCheckpoint) => void }): { publisher: CheckpointPublisher; published: PublishedCheckpoint[]; event: (i: number) => LedgerEvent } {
  const published: PublishedCheckpoint[] = [];
  const publisher = checkpointPublisher({ key, everyEvents: options.everyEvents, schedule: options.schedule, sink: options.sink ?? ((p) => void published.push(p)) });
  publisher.open({ head: { seq: 0, hash: '' }, snapshot: undefined, hashes: () => [] });
  const event = (i: number): LedgerEvent => ({ hash: createHash('sha256').update(`event ${i}`).digest('hex') }) as LedgerEvent;
  return { publisher, published, event };
}

describe('deferred integration of committed events', () => {
  test('the commit path only queues: nothing is published until the scheduled integration runs', async () => {
    const manual = manualSchedule();
    const published: PublishedCheckpoint[] = [];
    const ledger = createLedger({ transparency: checkpointPublisher({ key, sink: (p) => void published.push(p), everyEvents: 10, schedule: manual.schedule }) });
    await drive(ledger, 10); // 22 events
    expect(published).toEqual([]);
    expect(manual.run()).toBeGreaterThan(0);
    expect(published.map((p) => p.checkpoint.size)).toEqual([10, 20]);
    const events = ledger.events();
    for (const p of published) expect(hex(p.checkpoint.root)).toBe(rootOf(events, p.checkpoint.size));
    await ledger.close();
  });

  test('checkpoints fall on the same batch boundaries as when integrating on the commit path', async () => {
    const sizes = async (schedule: (fn: () => void) => void, after: () => void): Promise<number[]> => {
      const published: PublishedCheckpoint[] = [];
      const ledger = createLedger({ transparency: checkpointPublisher({ key, sink: (p) => void published.push(p), everyEvents: 7, schedule }) });
      await drive(ledger, 20);
      after();
      const out = published.map((p) => p.checkpoint.size);
      await ledger.close();
      return out;
    };
    const manual = manualSchedule();
    const deferred = await sizes(manual.schedule, () => void manual.run());
    const inline = await sizes((fn) => fn(), () => undefined);
    expect(deferred).toEqual(inline);
    expect(deferred.length).toBeGreaterThan(3);
  });

  test('by default the integration runs on the event loop (setImmediate), without closing the ledger', async () => {
    const published: PublishedCheckpoint[] = [];
    const ledger = createLedger({ transparency: checkpointPublisher({ key, sink: (p) => void published.push(p), everyEvents: 10 }) });
    await drive(ledger, 10);
    await new Promise((resolve) => setImmediate(resolve));
    expect(published.map((p) => p.checkpoint.size)).toEqual([10, 20]);
    await ledger.close();
  });

  test('reading the tree or the latest checkpoint integrates the queue first', async () => {
    const manual = manualSchedule();
    const publisher = checkpointPublisher({ key, sink: () => undefined, everyEvents: 10, schedule: manual.schedule });
    const ledger = createLedger({ transparency: publisher });
    await drive(ledger, 10);
    const events = ledger.events();
    const tree = publisher.tree();
    expect(tree.size).toBe(events.length);
    expect(hex(tree.root)).toBe(rootOf(events, events.length));
    expect(publisher.latest()?.split('\n')[1]).toBe('20');
    manual.run(); // the scheduled run finds an empty queue
    expect(publisher.tree().size).toBe(events.length);
    await ledger.close();
  });

  test('a queue that reaches integrationQueueMax is integrated at once, even if the scheduled run never comes', () => {
    const { publisher, published, event } = bare({ everyEvents: integrationQueueMax, schedule: () => undefined });
    for (let i = 0; i < integrationQueueMax - 1; i++) publisher.appended([event(i)]);
    expect(published).toEqual([]);
    publisher.appended([event(integrationQueueMax - 1)]);
    expect(published.map((p) => p.checkpoint.size)).toEqual([integrationQueueMax]);
    const expected = rootOfEventHashes(hasher, Array.from({ length: integrationQueueMax }, (_, i) => event(i).hash));
    expect(hex(published[0]?.checkpoint.root as Uint8Array)).toBe(hex(expected.root));
  });

  test('schedules one integration per run of queued batches, not one per batch', () => {
    const manual = manualSchedule();
    const { publisher, event } = bare({ everyEvents: 1_000, schedule: manual.schedule });
    for (let i = 0; i < 5; i++) publisher.appended([event(i)]);
    expect(manual.run()).toBe(1);
    publisher.appended([event(5)]);
    expect(manual.run()).toBe(1);
    expect(publisher.tree().size).toBe(6);
  });

  test('a sink that reads the tree while a checkpoint is published sees that checkpoint, integration not re-entered', () => {
    const manual = manualSchedule();
    const seen: number[] = [];
    let publisher: CheckpointPublisher | undefined;
    const fed = bare({ everyEvents: 2, schedule: manual.schedule, sink: (p) => void seen.push(p.checkpoint.size, (publisher as CheckpointPublisher).tree().size) });
    publisher = fed.publisher;
    for (let i = 0; i < 6; i++) fed.publisher.appended([fed.event(i)]);
    manual.run();
    expect(seen).toEqual([2, 2, 4, 4, 6, 6]);
  });

  test('a failing scheduler is reported and the events stay queued for the next read', () => {
    const errors: Error[] = [];
    const published: PublishedCheckpoint[] = [];
    const publisher = checkpointPublisher({
      key,
      everyEvents: 100,
      sink: (p) => void published.push(p),
      onError: (e) => void errors.push(e),
      schedule: () => {
        throw new Error('no event loop');
      },
    });
    publisher.open({ head: { seq: 0, hash: '' }, snapshot: undefined, hashes: () => [] });
    publisher.appended([{ hash: createHash('sha256').update('one').digest('hex') } as LedgerEvent]);
    expect(errors.map((e) => e.message)).toEqual(['no event loop']);
    expect(publisher.tree().size).toBe(1);
  });

  test('a schedule that is not a function is refused', () => {
    expect(() => checkpointPublisher({ key, everyEvents: 1, sink: () => undefined, schedule: 5 as unknown as () => void })).toThrow(/schedule must be a function/);
  });
});

describe('the default schedule: integration in batches', () => {
  afterEach(() => jest.useRealTimers());

  /** A bare publisher on the default schedule that counts its tree hashes: integration shows without reading the tree. */
  function counted(everyEvents: number): { publisher: CheckpointPublisher; published: PublishedCheckpoint[]; hashes: () => number; event: (i: number) => LedgerEvent } {
    let hashes = 0;
    const into = nodeCrypto.sha256Into as NonNullable<TransparencySigner['sha256Into']>;
    const crypto: TransparencySigner = { ...nodeCrypto, sha256Into: (data, out, at) => void (hashes++, into(data, out, at)) };
    const published: PublishedCheckpoint[] = [];
    const publisher = checkpointPublisher({ key, everyEvents, crypto, sink: (p) => void published.push(p) });
    publisher.open({ head: { seq: 0, hash: '' }, snapshot: undefined, hashes: () => [] });
    const event = (i: number): LedgerEvent => ({ hash: createHash('sha256').update(`event ${i}`).digest('hex') }) as LedgerEvent;
    return { publisher, published, hashes: () => hashes, event };
  }

  test('commits that make no checkpoint due share one timer and are integrated together integrationDelayMs after the first', () => {
    jest.useFakeTimers();
    const { publisher, hashes, event } = counted(1_000);
    for (let i = 0; i < 100; i++) publisher.appended([event(i)]);
    expect(jest.getTimerCount()).toBe(1);
    jest.advanceTimersByTime(integrationDelayMs - 1);
    expect(hashes()).toBe(0);
    jest.advanceTimersByTime(1);
    expect(hashes()).toBe(100 + 97); // a leaf hash each, and one merge per trailing one bit: 100 − popcount(100)
    expect(jest.getTimerCount()).toBe(0);
    publisher.appended([event(100)]); // the next commit arms the next timer
    expect(jest.getTimerCount()).toBe(1);
    expect(publisher.tree().size).toBe(101);
  });

  test('a commit that makes a checkpoint due has it integrated and signed on the next turn of the event loop, not a timer later', () => {
    jest.useFakeTimers();
    const { publisher, published, hashes, event } = counted(10);
    for (let i = 0; i < 9; i++) publisher.appended([event(i)]);
    jest.advanceTimersByTime(0);
    expect(hashes()).toBe(0);
    publisher.appended([event(9)]);
    jest.advanceTimersByTime(0); // setImmediate's turn
    expect(published.map((p) => p.checkpoint.size)).toEqual([10]);
    const expected = rootOfEventHashes(hasher, Array.from({ length: 10 }, (_, i) => event(i).hash));
    expect(hex(published[0]?.checkpoint.root as Uint8Array)).toBe(hex(expected.root));
  });

  test('close cancels the batching timer and integrates (and publishes) what was queued', () => {
    jest.useFakeTimers();
    const { publisher, published, event } = counted(1_000);
    for (let i = 0; i < 5; i++) publisher.appended([event(i)]);
    expect(jest.getTimerCount()).toBe(1);
    publisher.close();
    expect(jest.getTimerCount()).toBe(0);
    expect(published.map((p) => p.checkpoint.size)).toEqual([5]);
  });
});

import { BoundedQueue } from '../../src/stream/boundedQueue';
import { CommandStream } from '../../src/stream/commandStream';
import { notesLedger } from '../support/fixtures';

describe('BoundedQueue', () => {
  it('keeps FIFO order across growth and wrap-around', () => {
    const q = new BoundedQueue<number>(5000);
    const out: number[] = [];
    for (let i = 0; i < 3000; i++) {
      q.push(i);
      if (i % 3 === 0) out.push(q.shift() as number);
    }
    while (q.length > 0) out.push(q.shift() as number);
    expect(out).toEqual(Array.from({ length: 3000 }, (_, i) => i));
  });

  it('refuses a push at capacity and accepts a forced one', () => {
    const q = new BoundedQueue<number>(2);
    expect(q.push(1)).toBe(true);
    expect(q.push(2)).toBe(true);
    expect(q.push(3)).toBe(false);
    q.forcePush(4);
    expect([q.shift(), q.shift(), q.shift(), q.shift()]).toEqual([1, 2, 4, undefined]);
  });
});

describe('CommandStream', () => {
  it('processes queued requests in order, in batches of at most batchMax, one batch at a time', async () => {
    const batches: number[][] = [];
    let active = 0;
    const stream = new CommandStream<number>(100, 4, (batch) => {
      active++;
      expect(active).toBe(1);
      batches.push(batch);
      active--;
    });
    for (let i = 0; i < 10; i++) stream.submit(i);
    await stream.idle();
    expect(batches).toEqual([[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]);
    stream.stop();
  });

  it('queues a request submitted from inside a batch after that batch instead of re-entering', async () => {
    const seen: number[] = [];
    const stream: CommandStream<number> = new CommandStream<number>(100, 10, (batch) => {
      for (const n of batch) {
        seen.push(n);
        if (n === 1) stream.submit(99);
      }
    });
    stream.submit(1);
    stream.submit(2);
    await stream.idle();
    expect(seen).toEqual([1, 2, 99]);
    stream.stop();
  });

  // Requests that reach the process in separate callbacks of one event-loop turn (two HTTP sessions,
  // a tool result) are modelled by submits separated by a macrotask boundary's worth of microtasks.
  const submitsAcrossCallbacks = async (gather: boolean): Promise<number[][]> => {
    const batches: number[][] = [];
    const stream = new CommandStream<number>(100, 10, (batch) => void batches.push(batch), gather);
    stream.submit(1);
    await Promise.resolve();
    stream.submit(2);
    await Promise.resolve();
    stream.submit(3);
    await stream.idle();
    stream.stop();
    return batches;
  };

  it('starts a batch on a microtask by default: requests of separate callbacks commit one by one', async () => {
    expect(await submitsAcrossCallbacks(false)).toEqual([[1], [2], [3]]);
  });

  it('gathers the requests of one event-loop turn into one batch when commits flush (group commit)', async () => {
    expect(await submitsAcrossCallbacks(true)).toEqual([[1, 2, 3]]);
  });
});

describe('bursts', () => {
  it('decides a burst of 20,000 calls correctly when the pending bound allows it', async () => {
    const { ledger, notes } = await notesLedger({ pendingCommandsMax: 50_000 });
    const { token, grantId } = await ledger.issue({ tools: ['notes.write'], resources: ['notes:/drafts/'], expiresAt: Date.now() + 3_600_000, budget: { calls: 12_345, inputBytes: 10_000_000 } });
    const outcomes = await Promise.all(Array.from({ length: 20_000 }, (_, i) => ledger.invoke(token, 'notes.write', { path: `drafts/${i}`, text: 'x' })));
    expect(outcomes.filter((o) => o.status === 'completed')).toHaveLength(12_345);
    expect(outcomes.filter((o) => o.status === 'rejected' && o.reason === 'call_budget_exhausted')).toHaveLength(20_000 - 12_345);
    expect(notes.size).toBe(12_345);
    expect(ledger.usage(grantId).calls.used).toBe(12_345);
    await ledger.close();
  });
});

describe('state', () => {
  it('is deeply frozen and shares untouched parts between versions', async () => {
    const { ledger } = await notesLedger();
    const a = await ledger.issue({ tools: ['notes.write'], resources: ['notes:/drafts/'], expiresAt: Date.now() + 60_000, budget: { calls: 5, inputBytes: 500 } });
    await ledger.issue({ tools: ['notes.read'], resources: ['notes:/drafts/'], expiresAt: Date.now() + 60_000, budget: { calls: 5, inputBytes: 500 } });
    const before = ledger.state();
    await ledger.invoke(a.token, 'notes.write', { path: 'drafts/x', text: 'y' });
    const after = ledger.state();
    expect(Object.isFrozen(after)).toBe(true);
    expect(Object.isFrozen(after.grants)).toBe(true);
    expect(() => {
      (after.head as { seq: number }).seq = 0;
    }).toThrow(TypeError);
    expect(after.tools).toBe(before.tools); // untouched by a call: the same object
    expect(after.grants).not.toBe(before.grants);
    await ledger.close();
  });
});

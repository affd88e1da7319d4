import { canonicalJson } from '../../src/domain/canonicalJson';
import * as chainModule from '../../src/domain/chain';
import { sealEvent } from '../../src/domain/chain';
import type { LedgerEvent } from '../../src/domain/events';
import { foldForeign } from '../../src/stream/foldForeign';
import { isHashChecked, markHashChecked } from '../../src/stream/hashChecked';
import { createLedger } from '../../src';
import { rowOf } from '../../src/stores/shared/eventRows';
import { ForeignPrefetch, notifyChannel, notifyPayloadBytesMax, notifyStatement, prefetchedEventsMax } from '../../src/stores/postgres/postgresPrefetch';

const zero = { seq: 0, hash: '0'.repeat(64) };

/** A chain of `n` completed-call events (the shape does not matter to the prefetch, only the chain). */
function chain(n: number, from: { seq: number; hash: string } = zero): LedgerEvent[] {
  const events: LedgerEvent[] = [];
  let head = from;
  for (let i = 0; i < n; i++) {
    const event = sealEvent({ type: 'call.completed', callId: `c${head.seq + 1}`, grantId: 'g1', tool: 't' }, 1_000 + head.seq, head);
    events.push(event);
    head = event;
  }
  return events;
}

const payload = (sender: string, events: readonly LedgerEvent[]): string => [sender, ...events.map((e) => canonicalJson(e))].join('\n');

describe('ForeignPrefetch: other writers\' events received by NOTIFY', () => {
  const prefetch = (): ForeignPrefetch => new ForeignPrefetch({}, 'atc');

  it('holds another writer\'s events parsed and hash-checked, and hands one out only for exactly its body', () => {
    const p = prefetch();
    const [first, second] = chain(2) as [LedgerEvent, LedgerEvent];
    p.receive(payload('other', [first, second]));
    expect(p.size).toBe(2);
    const taken = p.take(1, canonicalJson(first));
    expect(taken).toEqual(first);
    expect(taken !== undefined && isHashChecked(taken)).toBe(true);
    expect(Object.isFrozen(taken)).toBe(true);
    // The row read under the lock is the truth: another body at that seq gets nothing.
    expect(p.take(1, canonicalJson(second))).toBeUndefined();
    expect(p.take(3, canonicalJson(first))).toBeUndefined();
  });

  it('skips its own notifications (its events are folded already)', () => {
    const p = prefetch();
    p.receive(payload(p.sender, chain(2)));
    expect(p.size).toBe(0);
  });

  it('holds nothing of a hostile payload, never throws, and still reports it', () => {
    const p = prefetch();
    let seen = 0;
    p.observer = () => seen++;
    const [event] = chain(1) as [LedgerEvent];
    const wrongHash = canonicalJson({ ...event, hash: 'f'.repeat(64) });
    const hostile = ['not json', '[]', 'null', '"text"', '{"seq":"1","hash":"x"}', '{"seq":1e400,"hash":"x"}', '{"__proto__":{"polluted":1},"seq":1,"hash":"x"}', wrongHash, ''];
    for (const line of hostile) expect(() => p.receive(`other\n${line}`)).not.toThrow();
    expect(() => p.receive('')).not.toThrow();
    expect(() => p.receive('other')).not.toThrow();
    expect(p.size).toBe(0);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(seen).toBe(hostile.length);
  });

  it('keeps at most prefetchedEventsMax events, the newest', () => {
    const p = prefetch();
    const events = chain(prefetchedEventsMax + 10);
    for (let i = 0; i < events.length; i += 10) p.receive(payload('other', events.slice(i, i + 10)));
    expect(p.size).toBe(prefetchedEventsMax);
    const last = events[events.length - 1] as LedgerEvent;
    expect(p.take(last.seq, canonicalJson(last))).toEqual(last);
    expect(p.take(1, canonicalJson(events[0] as LedgerEvent))).toBeUndefined();
  });

  it('forgets what the ledger folded', () => {
    const p = prefetch();
    const events = chain(5);
    p.receive(payload('other', events));
    p.forget(3);
    expect(p.size).toBe(2);
    expect(p.take(3, canonicalJson(events[2] as LedgerEvent))).toBeUndefined();
    expect(p.take(4, canonicalJson(events[3] as LedgerEvent))).toBeDefined();
  });

  it('names a channel of at most 63 bytes for the longest schema name', () => {
    expect(notifyChannel('a'.repeat(63)).length).toBeLessThanOrEqual(63);
    expect(notifyChannel('atc')).not.toBe(notifyChannel('atd'));
  });
});

describe('notifyStatement', () => {
  const p = new ForeignPrefetch({}, 'atc');

  it('notifies the batch read back from its first seq, only if that row is the batch\'s own', () => {
    const rows = chain(3).map(rowOf);
    const text = notifyStatement('"atc".events', rows, p);
    expect(text).toContain(`pg_notify('${p.channel}', '${p.sender}'`);
    expect(text).toContain('WHERE seq >= 1 HAVING bool_or(seq = 1 AND hash = ');
    expect(text).toContain(rows[0]?.hash);
  });

  it('sends no notification when the bodies would not fit a payload', () => {
    const events = chain(Math.ceil(notifyPayloadBytesMax / 100) + 1);
    const rows = events.map(rowOf);
    expect(rows.reduce((n, r) => n + r.body.length + 1, 0)).toBeGreaterThan(notifyPayloadBytesMax);
    expect(notifyStatement('"atc".events', rows, p)).toBe('');
    expect(notifyStatement('"atc".events', [], p)).toBe('');
  });
});

describe('foldForeign and hash-checked events', () => {
  const start = createLedger().state();

  it('still refuses an event whose hash is not its content\'s when nobody checked it', () => {
    const [event] = chain(1, start.head) as [LedgerEvent];
    const forged = Object.freeze({ ...event, callId: 'other' }) as LedgerEvent;
    expect(() => foldForeign(start, [forged])).toThrow(expect.objectContaining({ code: 'invalid_log' }));
  });

  it('never takes an unfrozen event as checked (what was checked could change afterwards)', () => {
    const [event] = chain(1, start.head) as [LedgerEvent];
    const open = { ...event, callId: 'other' } as LedgerEvent;
    markHashChecked(open);
    expect(isHashChecked(open)).toBe(false);
    expect(() => foldForeign(start, [open])).toThrow(expect.objectContaining({ code: 'invalid_log' }));
  });

  it('does not hash again an event the store checked (the work the prefetch moved out of the lock)', () => {
    const events = chain(3, start.head);
    for (const event of events.slice(0, 2)) markHashChecked(event);
    const hashed = jest.spyOn(chainModule, 'eventHash');
    try {
      expect(foldForeign(start, events).head.seq).toBe(start.head.seq + 3);
      expect(hashed).toHaveBeenCalledTimes(1);
      expect(hashed).toHaveBeenCalledWith(events[2]);
    } finally {
      hashed.mockRestore();
    }
  });

  it('still checks seq and chain of a hash-checked event', () => {
    const [, second] = chain(2, start.head) as [LedgerEvent, LedgerEvent];
    markHashChecked(second);
    expect(() => foldForeign(start, [second])).toThrow(expect.objectContaining({ code: 'invalid_log' }));
  });
});

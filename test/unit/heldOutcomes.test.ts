import { HeldOutcomes } from '../../src/stream/heldOutcomes';
import { CallIds } from '../../src/stream/ids';
import type { InvokeOutcome } from '../../src/stream/types';

const completed = (n: number): InvokeOutcome<unknown> => ({ status: 'completed', callId: `c${n}`, value: n });

describe('HeldOutcomes: the keyed outcomes a ledger object keeps for retries', () => {
  it('finds each outcome by its call ordinal once held, and nothing before', () => {
    const held = new HeldOutcomes(4);
    const slot = held.reserve(7);
    expect(held.get(7)).toBeUndefined();
    held.hold(slot, 7, completed(7));
    expect(held.get(7)).toEqual(completed(7));
    expect(held.get(8)).toBeUndefined();
    expect(held.get(6)).toBeUndefined();
  });

  it('keeps the last max admitted, forgetting the oldest first, with gaps between ordinals (unkeyed calls)', () => {
    const held = new HeldOutcomes(3);
    const ordinals = [2, 5, 6, 9, 14];
    for (const n of ordinals) held.hold(held.reserve(n), n, completed(n));
    expect(held.get(2)).toBeUndefined();
    expect(held.get(5)).toBeUndefined();
    for (const n of [6, 9, 14]) expect(held.get(n)).toEqual(completed(n));
    for (const n of [1, 3, 7, 10, 15]) expect(held.get(n)).toBeUndefined();
  });

  it('drops an outcome that arrives after a newer admission took its slot (a long-running call)', () => {
    const held = new HeldOutcomes(2);
    const slow = held.reserve(1);
    held.hold(held.reserve(2), 2, completed(2));
    held.hold(held.reserve(3), 3, completed(3)); // takes the slow call's slot
    held.hold(slow, 1, completed(1));
    expect(held.get(1)).toBeUndefined();
    expect(held.get(3)).toEqual(completed(3));
    expect(held.get(2)).toEqual(completed(2));
  });

  it('finds every held ordinal across many wraps of the ring', () => {
    const held = new HeldOutcomes(5);
    for (let n = 1; n <= 23; n++) held.hold(held.reserve(3 * n), 3 * n, completed(3 * n));
    for (let n = 1; n <= 23; n++) expect(held.get(3 * n)).toEqual(n > 18 ? completed(3 * n) : undefined);
  });
});

describe('CallIds: a ledger object\'s call ids and their ordinals', () => {
  it('gives back the ordinal of each id it made', () => {
    const ids = new CallIds();
    const taken = Array.from({ length: 40 }, () => ids.take());
    expect(taken).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    for (const n of taken) expect(ids.ordinalOf(ids.id(n))).toBe(n);
  });

  it("knows no ordinal for another source's ids, ids not taken yet, or malformed ones", () => {
    const ids = new CallIds();
    const other = new CallIds();
    ids.take();
    other.take();
    expect(ids.ordinalOf(other.id(1))).toBeUndefined();
    expect(ids.ordinalOf(ids.id(2))).toBeUndefined();
    const prefix = ids.id(1).slice(0, -1);
    for (const bad of [prefix, `${prefix}01`, `${prefix}1x`, `${prefix}-1`, `${prefix}${'z'.repeat(30)}`, '', 'c_']) expect(ids.ordinalOf(bad)).toBeUndefined();
  });
});

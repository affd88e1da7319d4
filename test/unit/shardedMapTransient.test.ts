import fc from 'fast-check';
import { emptyShardedMap, shardEntries, shardGet, shardWith, shardWithout, type ShardedMap } from '../../src/domain/shardedMap';
import { emptyMap, slot } from '../../src/domain/shardLayout';
import { OwnedNodes, shardDeleteOwned, shardSetOwned } from '../../src/domain/shardedMapTransient';

// Transient edits of the sharded map (shardedMapTransient.ts) give what persistent writes give.

/** Keys whose 18 hash bits the trie uses are equal: they share one leaf. */
function collidingKeys(): [string, string, string] {
  const seen = new Map<number, string[]>();
  for (let i = 0; ; i++) {
    const key = `k${i}`;
    const bits = slot(key) & 0x3ffff;
    const same = seen.get(bits) ?? [];
    same.push(key);
    seen.set(bits, same);
    if (same.length === 3) return same as [string, string, string];
  }
}

function deepFrozen(node: unknown): boolean {
  if (!Array.isArray(node)) return true;
  return Object.isFrozen(node) && node.every((child) => !Array.isArray(child) || deepFrozen(child));
}

function persistent(ops: readonly [boolean, string, number][], start: ShardedMap<number>): ShardedMap<number> {
  let map = start;
  for (const [set, k, v] of ops) map = set ? shardWith(map, k, v) : shardWithout(map, k);
  return map;
}

function transient(ops: readonly [boolean, string, number][], start: ShardedMap<number>, owned: OwnedNodes): ShardedMap<number> {
  let map = start;
  for (const [set, k, v] of ops) map = set ? shardSetOwned(map, k, v, owned) : shardDeleteOwned(map, k, owned);
  return map;
}

describe('transient sharded map edits', () => {
  it('equal what persistent writes give, from any frozen start, leaving the start unchanged', () => {
    const [c1, c2, c3] = collidingKeys();
    const key = fc.constantFrom('a', 'b', 'g_1', '', c1, c2, c3);
    const op = fc.tuple(fc.boolean(), key, fc.integer());
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), fc.array(op, { maxLength: 40 }), (before, edits) => {
        const start = persistent(before, emptyShardedMap());
        const startEntries = [...shardEntries(start)];
        const owned = new OwnedNodes();
        const result = transient(edits, start, owned);
        owned.freezeOwned();
        expect(result).toEqual(persistent(edits, start));
        expect(deepFrozen(result)).toBe(true);
        expect([...shardEntries(start)]).toEqual(startEntries);
      }),
      { numRuns: 300 },
    );
  });

  it('set a key on the empty map and read it back', () => {
    const owned = new OwnedNodes();
    const map = shardSetOwned(emptyShardedMap<number>(), 'a', 1, owned);
    expect(shardGet(map, 'a')).toBe(1);
  });

  it('replace a key’s value in a shared leaf without touching its neighbours', () => {
    const [c1, c2] = collidingKeys();
    const owned = new OwnedNodes();
    let map = shardSetOwned(emptyShardedMap<number>(), c1, 1, owned);
    map = shardSetOwned(map, c2, 2, owned);
    map = shardSetOwned(map, c1, 3, owned);
    expect([shardGet(map, c1), shardGet(map, c2)]).toEqual([3, 2]);
    expect([...shardEntries(map)]).toHaveLength(2);
  });

  it('return the map itself when deleting a key it does not hold', () => {
    const [c1, c2] = collidingKeys();
    const start = shardWith(emptyShardedMap<number>(), c1, 1);
    const owned = new OwnedNodes();
    expect(shardDeleteOwned(start, 'absent', owned)).toBe(start);
    expect(shardDeleteOwned(start, c2, owned)).toBe(start);
    expect(shardDeleteOwned(emptyShardedMap<number>(), 'a', owned)).toBe(emptyShardedMap<number>());
  });

  it('prune to the empty map when the last key goes', () => {
    const owned = new OwnedNodes();
    const start = shardWith(emptyShardedMap<number>(), 'a', 1);
    expect(shardDeleteOwned(start, 'a', owned)).toBe(emptyMap);
  });

  it('keep the other keys of a leaf when one of them is deleted', () => {
    const [c1, c2, c3] = collidingKeys();
    const start = shardWith(shardWith(shardWith(emptyShardedMap<number>(), c1, 1), c2, 2), c3, 3);
    const owned = new OwnedNodes();
    const map = shardDeleteOwned(start, c2, owned);
    expect([shardGet(map, c1), shardGet(map, c2), shardGet(map, c3)]).toEqual([1, undefined, 3]);
  });
});

describe('OwnedNodes', () => {
  it('copies a frozen node once and then hands out the same copy', () => {
    const owned = new OwnedNodes();
    const frozen = Object.freeze([1, 2]);
    const copy = owned.own(frozen);
    expect(copy).not.toBe(frozen);
    expect(copy).toEqual([1, 2]);
    expect(owned.own(copy)).toBe(copy);
  });

  it('freezes every node it made or copied, and copies again afterwards', () => {
    const owned = new OwnedNodes();
    const copy = owned.own(Object.freeze([1]));
    const fresh = owned.fresh([2]);
    owned.freezeOwned();
    expect(Object.isFrozen(copy)).toBe(true);
    expect(Object.isFrozen(fresh)).toBe(true);
    expect(owned.own(copy)).not.toBe(copy);
  });
});

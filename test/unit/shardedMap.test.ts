import fc from 'fast-check';
import { emptyShardedMap, shardEntries, shardGet, shardWith, shardWithout, type ShardedMap } from '../../src/domain/shardedMap';

describe('sharded map (persistent trie of frozen arrays)', () => {
  it('agrees with a Map after any sequence of sets and deletes, and equal contents are deep-equal', () => {
    const key = fc.oneof(fc.constantFrom('a', 'b', 'g_1', 'g_2', ''), fc.string({ maxLength: 6 }));
    const op = fc.tuple(fc.boolean(), key, fc.integer());
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        let map: ShardedMap<number> = emptyShardedMap();
        const model = new Map<string, number>();
        for (const [set, k, v] of ops) {
          if (set) {
            map = shardWith(map, k, v);
            model.set(k, v);
          } else {
            map = shardWithout(map, k);
            model.delete(k);
          }
        }
        for (const [k, v] of model) if (shardGet(map, k) !== v) return false;
        if (new Map(shardEntries(map)).size !== model.size) return false;
        // Rebuilt from scratch in the same key order: the same plain value.
        let rebuilt: ShardedMap<number> = emptyShardedMap();
        for (const [k, v] of shardEntries(map)) rebuilt = shardWith(rebuilt, k, v);
        expect(rebuilt).toEqual(map);
        return true;
      }),
      { numRuns: 300 },
    );
  });

  it('leaves the original untouched and frozen, sharing it after a write', () => {
    const before = shardWith(shardWith(emptyShardedMap<number>(), 'x', 1), 'y', 2);
    const after = shardWith(before, 'x', 3);
    expect(shardGet(before, 'x')).toBe(1);
    expect(shardGet(after, 'x')).toBe(3);
    expect(Object.isFrozen(after)).toBe(true);
    expect(shardWithout(shardWithout(after, 'x'), 'y')).toEqual(emptyShardedMap());
  });

  it('survives a JSON round trip as an equal value', () => {
    let map: ShardedMap<{ n: number }> = emptyShardedMap();
    for (let i = 0; i < 500; i++) map = shardWith(map, `k${i}`, Object.freeze({ n: i }));
    expect(JSON.parse(JSON.stringify(map))).toEqual(map);
  });
});

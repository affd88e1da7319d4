/**
 * A persistent hashed map of frozen plain data: a 64-slot top array, 64-slot middle arrays, and
 * leaves that hold `[key, value, key, value, …]` flat.
 *
 * Why this shape: the state must stay frozen, structurally shared, deep-equal comparable and
 * JSON-serializable (snapshots), and one event must cost the same with 100 grants as with 100,000.
 * A write copies one top array, one middle array and one leaf (n / 4096 pairs) and shares the rest.
 * Arrays rather than objects: V8 copies a frozen array of 64 slots in tens of ns, while copying an
 * object with 64 integer-like keys, or creating objects keyed by ever-new ids (hidden-class churn),
 * costs µs. Empty slots are `null` (not holes), so a JSON round trip gives back an equal value.
 */
export type ShardLeaf<V> = readonly (string | V)[];
export type ShardMid<V> = readonly (ShardLeaf<V> | null)[];
export type ShardedMap<V> = readonly (ShardMid<V> | null)[];

const fanout = 64;
const emptyMap: ShardedMap<never> = Object.freeze([]);

// FNV-1a over UTF-16 code units: cheap, and spreads random and sequential keys alike.
function slot(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function indexOfKey<V>(leaf: ShardLeaf<V>, key: string): number {
  for (let i = 0; i < leaf.length; i += 2) if (leaf[i] === key) return i;
  return -1;
}

function nullSlots<T>(): (T | null)[] {
  return new Array<T | null>(fanout).fill(null);
}

function allNull(slots: readonly unknown[]): boolean {
  for (const s of slots) if (s !== null) return false;
  return true;
}

export function emptyShardedMap<V>(): ShardedMap<V> {
  return emptyMap;
}

export function shardGet<V>(map: ShardedMap<V>, key: string): V | undefined {
  const h = slot(key);
  const leaf = map[h & 63]?.[(h >>> 6) & 63];
  if (leaf === undefined || leaf === null) return undefined;
  const i = indexOfKey(leaf, key);
  return i < 0 ? undefined : (leaf[i + 1] as V);
}

/**
 * A new frozen map with `key` set to `value` (which must already be frozen). This is what immer's
 * `produce` did on the earlier object shape, without proxy drafts.
 */
export function shardWith<V>(map: ShardedMap<V>, key: string, value: V): ShardedMap<V> {
  const h = slot(key);
  const a = h & 63;
  const b = (h >>> 6) & 63;
  const mid = map.length === 0 ? null : (map[a] as ShardMid<V> | null);
  const leaf = mid === null ? null : (mid[b] as ShardLeaf<V> | null);
  let nextLeaf: (string | V)[];
  if (leaf === null) nextLeaf = [key, value];
  else {
    nextLeaf = [...leaf];
    const i = indexOfKey(leaf, key);
    if (i < 0) nextLeaf.push(key, value);
    else nextLeaf[i + 1] = value;
  }
  const nextMid = mid === null ? nullSlots<ShardLeaf<V>>() : [...mid];
  nextMid[b] = Object.freeze(nextLeaf);
  const nextMap = map.length === 0 ? nullSlots<ShardMid<V>>() : [...map];
  nextMap[a] = Object.freeze(nextMid);
  return Object.freeze(nextMap);
}

/** A new frozen map without `key`, pruning emptied nodes (so equal contents stay deep-equal); `map` itself when the key is absent. */
export function shardWithout<V>(map: ShardedMap<V>, key: string): ShardedMap<V> {
  const h = slot(key);
  const a = h & 63;
  const b = (h >>> 6) & 63;
  const mid = map.length === 0 ? null : (map[a] as ShardMid<V> | null);
  const leaf = mid === null ? null : (mid[b] as ShardLeaf<V> | null);
  const i = leaf === null ? -1 : indexOfKey(leaf, key);
  if (mid === null || leaf === null || i < 0) return map;
  const nextMid = [...mid];
  nextMid[b] = leaf.length === 2 ? null : Object.freeze([...leaf.slice(0, i), ...leaf.slice(i + 2)]);
  const nextMap = [...map];
  nextMap[a] = allNull(nextMid) ? null : Object.freeze(nextMid);
  return allNull(nextMap) ? emptyMap : Object.freeze(nextMap);
}

export function* shardEntries<V>(map: ShardedMap<V>): IterableIterator<[string, V]> {
  for (const mid of map) {
    if (mid === null) continue;
    for (const leaf of mid) {
      if (leaf === null) continue;
      for (let i = 0; i < leaf.length; i += 2) yield [leaf[i] as string, leaf[i + 1] as V];
    }
  }
}

export function* shardValues<V>(map: ShardedMap<V>): IterableIterator<V> {
  for (const [, value] of shardEntries(map)) yield value;
}

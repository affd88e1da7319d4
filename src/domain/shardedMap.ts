import { allNull, emptyMap, indexAt, indexOfKey, levels, nullSlots, slot } from './shardLayout';

/**
 * A persistent hashed map of frozen plain data: a trie of 64-slot arrays, three levels deep (18 bits
 * of the key's hash), whose leaves hold `[key, value, key, value, …]` flat.
 *
 * Why this shape: the state must stay frozen, structurally shared, deep-equal comparable and
 * JSON-serializable (snapshots), and one event must cost about the same with 100 grants as with
 * 100,000. A write copies three 64-slot arrays and one leaf and shares everything else; with
 * 262,144 leaves a leaf holds about one key even at 100,000 grants, so a lookup compares one or two
 * keys instead of scanning (and cache-missing through) a long leaf. Arrays rather than objects: V8
 * copies a frozen array of 64 slots in tens of ns, while copying an object with 64 integer-like keys,
 * or creating objects keyed by ever-new ids (hidden-class churn), costs µs. Empty slots are `null`
 * (not holes), so a JSON round trip gives back an equal value.
 */
export type ShardLeaf<V> = readonly (string | V)[];
export type ShardNode<V> = readonly (ShardNode<V> | ShardLeaf<V> | null)[];
export type ShardedMap<V> = ShardNode<V>;

export function emptyShardedMap<V>(): ShardedMap<V> {
  return emptyMap;
}

function leafOf<V>(map: ShardedMap<V>, h: number, depth: number): ShardLeaf<V> | undefined {
  let node: ShardNode<V> | ShardLeaf<V> | null | undefined = map;
  for (let level = 0; level < depth; level++) {
    node = (node as ShardNode<V>)[indexAt(h, level)];
    if (node === undefined || node === null) return undefined;
  }
  return node as ShardLeaf<V>;
}

/**
 * `depth` (every map: `levels`, except the idempotency bindings' two, see idempotency.ts) is how many
 * node levels lie above the leaves; a map is always read and written with the same depth.
 */
export function shardGet<V>(map: ShardedMap<V>, key: string, depth: number = levels): V | undefined {
  const leaf = leafOf(map, slot(key), depth);
  if (leaf === undefined) return undefined;
  const i = indexOfKey(leaf, key);
  return i < 0 ? undefined : (leaf[i + 1] as V);
}

/**
 * A new frozen map with `key` set to `value` (which must already be frozen): copy-on-write along one
 * path, as immer's `produce` would do, without proxy drafts.
 */
export function shardWith<V>(map: ShardedMap<V>, key: string, value: V, depth: number = levels): ShardedMap<V> {
  const h = slot(key);
  // The path from the root to the leaf (nulls where it does not exist yet).
  const path: (ShardNode<V> | null)[] = [];
  let node: ShardNode<V> | null = map.length === 0 ? null : map;
  for (let level = 0; level < depth; level++) {
    path.push(node);
    node = node === null ? null : ((node[indexAt(h, level)] ?? null) as ShardNode<V> | null);
  }
  const leaf = node as ShardLeaf<V> | null;
  let next: ShardLeaf<V> | ShardNode<V>;
  if (leaf === null) next = Object.freeze([key, value]);
  else {
    const copy = [...leaf];
    const i = indexOfKey(leaf, key);
    if (i < 0) copy.push(key, value);
    else copy[i + 1] = value;
    next = Object.freeze(copy);
  }
  for (let level = depth - 1; level >= 0; level--) {
    const parent = path[level] as ShardNode<V> | null;
    const copy = parent === null ? nullSlots<ShardNode<V> | ShardLeaf<V>>() : [...parent];
    copy[indexAt(h, level)] = next;
    next = Object.freeze(copy);
  }
  return next as ShardedMap<V>;
}

/** A new frozen map without `key`, pruning emptied nodes (so equal contents stay deep-equal); `map` itself when the key is absent. */
export function shardWithout<V>(map: ShardedMap<V>, key: string, depth: number = levels): ShardedMap<V> {
  const h = slot(key);
  const path: ShardNode<V>[] = [];
  let node: ShardNode<V> | ShardLeaf<V> | null | undefined = map;
  for (let level = 0; level < depth; level++) {
    if (node === undefined || node === null || node.length === 0) return map;
    path.push(node as ShardNode<V>);
    node = (node as ShardNode<V>)[indexAt(h, level)];
  }
  const leaf = node as ShardLeaf<V> | null | undefined;
  const i = leaf === undefined || leaf === null ? -1 : indexOfKey(leaf, key);
  if (leaf === undefined || leaf === null || i < 0) return map;
  let next: ShardNode<V> | ShardLeaf<V> | null = leaf.length === 2 ? null : Object.freeze([...leaf.slice(0, i), ...leaf.slice(i + 2)]);
  for (let level = depth - 1; level >= 0; level--) {
    const copy = [...(path[level] as ShardNode<V>)];
    copy[indexAt(h, level)] = next;
    next = allNull(copy) ? null : Object.freeze(copy);
  }
  return next === null ? emptyMap : (next as ShardedMap<V>);
}

// A leaf starts with a key (a string); a node with a child or null: so any depth is walked alike.
function* leaves<V>(node: ShardNode<V>): IterableIterator<ShardLeaf<V>> {
  for (const child of node) {
    if (child === null) continue;
    if (typeof child[0] === 'string') yield child as ShardLeaf<V>;
    else yield* leaves(child as ShardNode<V>);
  }
}

export function* shardEntries<V>(map: ShardedMap<V>): IterableIterator<[string, V]> {
  for (const leaf of leaves(map)) for (let i = 0; i < leaf.length; i += 2) yield [leaf[i] as string, leaf[i + 1] as V];
}

export function* shardValues<V>(map: ShardedMap<V>): IterableIterator<V> {
  for (const [, value] of shardEntries(map)) yield value;
}

/**
 * The layout shared by the persistent sharded map (shardedMap.ts) and its batch-local transient
 * edits (shardedMapTransient.ts): 64-slot nodes, three levels, the key's FNV-1a hash picking the
 * path, flat `[key, value, …]` leaves, `null` for empty slots and a frozen `[]` for the empty map.
 */
export const fanout = 64;
export const levels = 3;
export const emptyMap: readonly never[] = Object.freeze([]);

// FNV-1a over UTF-16 code units: cheap, and spreads random and sequential keys alike.
export function slot(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export const indexAt = (h: number, level: number): number => (h >>> (6 * level)) & 63;

export function indexOfKey(leaf: readonly unknown[], key: string): number {
  for (let i = 0; i < leaf.length; i += 2) if (leaf[i] === key) return i;
  return -1;
}

// Copied, never handed out: `slice` of a private packed array is ≈ 35 ns, `new Array(64).fill(null)`
// ≈ 150 ns (and `slice` of a *frozen* array takes a slow path, ≈ 1 µs, hence spreads elsewhere).
const nullTemplate: null[] = Array.from({ length: fanout }, () => null);

export function nullSlots<T>(): (T | null)[] {
  return nullTemplate.slice();
}

export function allNull(slots: readonly unknown[]): boolean {
  for (const s of slots) if (s !== null) return false;
  return true;
}

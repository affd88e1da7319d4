import { shardDeleteOwned, shardSetOwned, type OwnedNodes } from './shardedMapTransient';
import { shardWith, shardWithout, type ShardedMap } from './shardedMap';
import type { LedgerState } from './state';

/** The state's root with its fields assignable: `applyEvent` sets the containers an event changes. */
export type WritableState = { -readonly [K in keyof LedgerState]: LedgerState[K] };

/**
 * How a fold writes the sharded maps and the arrays inside records: `evolve` copies (shardWith,
 * shardWithout, a frozen copy of an array), `TransientState` edits the nodes and arrays it made
 * itself in place and freezes them when it commits. `applyEvent` (applyEvent.ts) is written once
 * against this interface; these two classes are its only implementations (so its call sites stay
 * at most bimorphic).
 */
export interface MapWrites {
  put<V>(map: ShardedMap<V>, key: string, value: V, depth?: number): ShardedMap<V>;
  remove<V>(map: ShardedMap<V>, key: string, depth?: number): ShardedMap<V>;
  /** An array this step may change: `array` itself if the fold made it (transient), else a copy. */
  writable<T>(array: readonly T[]): T[];
  /** A new array, for this step to fill. */
  fresh<T>(): T[];
  /** The step is done changing `array`: frozen now (`evolve`) or when the batch commits (transient). */
  done<T>(array: T[]): readonly T[];
}

/** The copying writer: every write a new frozen path (persistent maps), for `evolve` and replay. */
export class CopyingWrites implements MapWrites {
  put<V>(map: ShardedMap<V>, key: string, value: V, depth?: number): ShardedMap<V> {
    return shardWith(map, key, value, depth);
  }
  remove<V>(map: ShardedMap<V>, key: string, depth?: number): ShardedMap<V> {
    return shardWithout(map, key, depth);
  }
  writable<T>(array: readonly T[]): T[] {
    return [...array];
  }
  fresh<T>(): T[] {
    return [];
  }
  done<T>(array: T[]): readonly T[] {
    return Object.freeze(array);
  }
}

/** The owning writer: writes on the nodes and arrays the batch owns (one object per batch, not five closures), for `TransientState`. */
export class OwnedWrites implements MapWrites {
  constructor(private readonly owned: OwnedNodes) {}
  put<V>(map: ShardedMap<V>, key: string, value: V, depth?: number): ShardedMap<V> {
    return shardSetOwned(map, key, value, this.owned, depth);
  }
  remove<V>(map: ShardedMap<V>, key: string, depth?: number): ShardedMap<V> {
    return shardDeleteOwned(map, key, this.owned, depth);
  }
  writable<T>(array: readonly T[]): T[] {
    return this.owned.own(array) as T[];
  }
  fresh<T>(): T[] {
    return this.owned.fresh([]) as T[];
  }
  done<T>(array: T[]): readonly T[] {
    return array;
  }
}

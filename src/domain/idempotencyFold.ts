import type { EventOf } from './events';
import { keyBinding, orderKey, type KeyBinding, type KeyOrderEntry, type KeyQueue, type KeyStatus } from './idempotency';
import { shardGet, type ShardedMap } from './shardedMap';

/** The three containers of key bindings (state.ts), as one fold step reads and writes them. */
export interface KeyMaps {
  keys: ShardedMap<KeyBinding>;
  keyQueues: ShardedMap<KeyQueue>;
  keyOrder: ShardedMap<KeyOrderEntry>;
}

/** How a fold writes a map: `evolve` copies paths (shardWith/shardWithout), `TransientState` edits its own nodes. */
export interface MapWrites {
  put<V>(map: ShardedMap<V>, key: string, value: V): ShardedMap<V>;
  remove<V>(map: ShardedMap<V>, key: string): ShardedMap<V>;
}

/**
 * A keyed admission binds its key: first the tree's expired bindings are evicted from the front
 * of its queue (oldest first, stopping at the first live one), then the binding and its queue
 * position are added. An evicted position removes its binding only if that binding is still the one
 * it made (a key re-bound after expiry keeps its new binding).
 */
export function bindKey(maps: KeyMaps, writes: MapWrites, event: EventOf<'call.admitted'>, binding: string): void {
  const request = event.idempotency;
  if (request === undefined) return;
  const rootId = event.ancestors !== undefined && event.ancestors.length > 0 ? (event.ancestors[0] as string) : event.grantId;
  const queue = shardGet(maps.keyQueues, rootId);
  let first = queue?.first ?? 0;
  const next = queue?.next ?? 0;
  while (first < next) {
    const position = orderKey(rootId, first);
    const entry = shardGet(maps.keyOrder, position);
    if (entry !== undefined && entry.expiresAt > event.at) break;
    maps.keyOrder = writes.remove(maps.keyOrder, position);
    if (entry !== undefined && shardGet(maps.keys, entry.binding)?.callId === entry.callId) maps.keys = writes.remove(maps.keys, entry.binding);
    first++;
  }
  maps.keys = writes.put(maps.keys, binding, keyBinding(event.callId, event.tool, request.argsDigest, request.expiresAt, 'in_flight'));
  maps.keyOrder = writes.put(maps.keyOrder, orderKey(rootId, next), Object.freeze({ binding, callId: event.callId, expiresAt: request.expiresAt }));
  maps.keyQueues = writes.put(maps.keyQueues, rootId, Object.freeze({ first, next: next + 1 }));
}

/** A keyed call's settlement records how it ended on its binding (what a retry after a restart reports). */
export function settleKey(maps: KeyMaps, writes: MapWrites, binding: string, callId: string, status: KeyStatus): void {
  const current = shardGet(maps.keys, binding);
  if (current === undefined || current.callId !== callId) return;
  maps.keys = writes.put(maps.keys, binding, keyBinding(current.callId, current.tool, current.argsDigest, current.expiresAt, status));
}

import type { EventOf } from './events';
import { bindingsDepth, keyBinding, linked, queueChunk, queueEntry, type KeyBinding, type KeyQueue } from './idempotency';
import { withKeyQueue } from './records';
import { shardGet, type ShardedMap } from './shardedMap';
import type { GrantRecord } from './state';

/** The containers a key step changes (state.ts): the bindings, and the grants (a root keeps its tree's queue). */
export interface KeyMaps {
  grants: ShardedMap<GrantRecord>;
  idempotencyBindings: ShardedMap<KeyBinding>;
}

/**
 * How a fold writes: `evolve` copies (shardWith/shardWithout, a frozen copy of an array), `TransientState`
 * edits the nodes and arrays it made itself in place and freezes them when it commits.
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

const emptyQueue: KeyQueue = Object.freeze({ first: 0, next: 0, chunks: Object.freeze([]), tail: Object.freeze([]) });

/**
 * A keyed admission binds its key: first the tree's expired bindings are evicted from the front
 * of its queue (oldest first, stopping at the first live one), then the binding and its queue
 * position are added. An evicted position removes its binding only if that binding is still the one
 * it made (a key re-bound after expiry keeps its new binding). Runs after the admission's charge,
 * which has already rewritten the root's record (so a batch fold rewrites only its own leaf slot).
 */
export function bindKey(maps: KeyMaps, writes: MapWrites, event: EventOf<'call.admitted'>): void {
  const request = event.idempotency;
  if (request === undefined) return;
  const rootId = event.ancestors !== undefined && event.ancestors.length > 0 ? (event.ancestors[0] as string) : event.grantId;
  const root = shardGet(maps.grants, rootId);
  // The decider admitted the call on this chain, so its root is there; `evolve` trusts its events.
  if (root === undefined) return;
  const queue = root.keyQueue ?? emptyQueue;
  let first = queue.first;
  while (first < queue.next) {
    const entry = queueEntry(queue, first);
    if ((entry.chunk[entry.at + 2] as number) > event.at) break;
    maps.idempotencyBindings = withoutCall(maps.idempotencyBindings, writes, entry.chunk[entry.at] as string, entry.chunk[entry.at + 1] as string);
    first++;
  }
  // The full chunks now wholly before `first` are dropped (after the walk: a transient fold changes
  // its own chunk list in place, and the walk reads the queue as it was).
  const dropped = Math.min(Math.floor(first / queueChunk) - Math.floor(queue.first / queueChunk), queue.chunks.length);
  let chunks = queue.chunks;
  let chunksCopy: (readonly (string | number)[])[] | undefined;
  if (dropped > 0) {
    chunksCopy = writes.writable(chunks);
    chunksCopy.splice(0, dropped);
  }
  const digest = request.keyDigest;
  const binding = keyBinding(event.grantId, event.callId, event.tool, request.argsDigest, request.expiresAt);
  const chain = shardGet(maps.idempotencyBindings, digest, bindingsDepth);
  // A grant re-binds a digest only once its binding has expired: the new one replaces it.
  const bound = chain === undefined ? binding : relink([binding, ...chainOf(chain).filter((b) => b.grantId !== event.grantId)]);
  maps.idempotencyBindings = writes.put(maps.idempotencyBindings, digest, bound as KeyBinding, bindingsDepth);
  const tail = writes.writable(queue.tail);
  tail.push(digest, event.callId, request.expiresAt);
  let nextTail: readonly (string | number)[];
  if (tail.length === queueChunk * 3) {
    chunksCopy ??= writes.writable(chunks);
    chunksCopy.push(writes.done(tail));
    nextTail = writes.done(writes.fresh());
  } else nextTail = writes.done(tail);
  if (chunksCopy !== undefined) chunks = writes.done(chunksCopy);
  maps.grants = writes.put(maps.grants, rootId, withKeyQueue(root, Object.freeze({ first, next: queue.next + 1, chunks, tail: nextTail })));
}

/**
 * A keyed call that failed (or timed out) records it on its binding (what a retry after a restart
 * reports). A completion writes nothing: its binding's status follows from the call having left
 * `inFlight` (idempotency.ts, keyStatus).
 */
export function failKey(bindings: ShardedMap<KeyBinding>, writes: MapWrites, keyDigest: string, callId: string, status: 'failed' | 'timed_out'): ShardedMap<KeyBinding> {
  const chain = chainOf(shardGet(bindings, keyDigest, bindingsDepth));
  const at = chain.findIndex((b) => b.callId === callId);
  if (at < 0) return bindings;
  const current = chain[at] as KeyBinding;
  chain[at] = linked(current, status, current.next);
  return writes.put(bindings, keyDigest, relink(chain) as KeyBinding, bindingsDepth);
}

/** The bindings without the one call `callId` made under this digest (an evicted queue entry's): unchanged if another call's binding replaced it. */
function withoutCall(bindings: ShardedMap<KeyBinding>, writes: MapWrites, keyDigest: string, callId: string): ShardedMap<KeyBinding> {
  const chain = shardGet(bindings, keyDigest, bindingsDepth);
  if (chain === undefined) return bindings;
  if (chain.next === undefined) return chain.callId === callId ? writes.remove(bindings, keyDigest, bindingsDepth) : bindings;
  const all = chainOf(chain);
  const rest = all.filter((b) => b.callId !== callId);
  if (rest.length === all.length) return bindings;
  return writes.put(bindings, keyDigest, relink(rest) as KeyBinding, bindingsDepth);
}

function chainOf(chain: KeyBinding | undefined): KeyBinding[] {
  const all: KeyBinding[] = [];
  for (let b = chain; b !== undefined; b = b.next) all.push(b);
  return all;
}

/** The chain of these bindings in this order, reusing each binding whose `next` is already right. */
function relink(bindings: readonly KeyBinding[]): KeyBinding | undefined {
  let next: KeyBinding | undefined;
  for (let i = bindings.length - 1; i >= 0; i--) {
    const b = bindings[i] as KeyBinding;
    next = b.next === next ? b : linked(b, b.status, next);
  }
  return next;
}

import type { EventOf } from './events';
import { bindingsDepth, isByGrant, keyBinding, queueChunk, queueEntry, withStatus } from './idempotency';
import { withKeyQueue } from './records';
import { shardGet, shardValues, shardWith, shardWithout, type ShardedMap } from './shardedMap';
import type { DigestBindings, GrantRecord, KeyBinding, KeyQueue } from './state';
import type { MapWrites } from './stateWrites';

/** The containers a key step changes (state.ts): the bindings, and the grants (a root keeps its tree's queue). */
export interface KeyMaps {
  grants: ShardedMap<GrantRecord>;
  idempotencyBindings: ShardedMap<DigestBindings>;
}

const emptyQueue: KeyQueue = Object.freeze({ first: 0, next: 0, chunks: Object.freeze([]), tail: Object.freeze([]) });

/**
 * A keyed admission (or a keyed call starting to wait for a person: `waiting`) binds its key: first
 * the tree's expired bindings are evicted from the front of its queue (oldest first, stopping at the
 * first live one), then the binding and its queue position are added. An evicted position removes its
 * binding only if that binding is still the one it made (a key re-bound after expiry keeps its new
 * binding). Runs after the admission's charge, which has already rewritten the root's record (so a
 * batch fold rewrites only its own leaf slot).
 */
export function bindKey(maps: KeyMaps, writes: MapWrites, event: EventOf<'call.admitted'> | EventOf<'approval.requested'>, waiting = false): void {
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
    if (entry.expiresAt > event.at) break;
    maps.idempotencyBindings = withoutCall(maps.idempotencyBindings, writes, entry.keyDigest, entry.grantId, entry.callId);
    first++;
  }
  // The full chunks now wholly before `first` are dropped (after the walk: a transient fold changes
  // its own chunk list in place, and the walk reads the queue as it was).
  const dropped = Math.min(Math.floor(first / queueChunk) - Math.floor(queue.first / queueChunk), queue.chunks.length);
  let chunks = queue.chunks;
  let chunksCopy: (readonly KeyBinding[])[] | undefined;
  if (dropped > 0) {
    chunksCopy = writes.writable(chunks);
    chunksCopy.splice(0, dropped);
  }
  const digest = request.keyDigest;
  const bound = keyBinding(digest, event.grantId, event.callId, event.tool, request.argsDigest, request.expiresAt);
  const binding = waiting ? withStatus(bound, 'waiting') : bound;
  maps.idempotencyBindings = writes.put(maps.idempotencyBindings, digest, withBinding(shardGet(maps.idempotencyBindings, digest, bindingsDepth), binding), bindingsDepth);
  const tail = writes.writable(queue.tail);
  tail.push(binding);
  let nextTail: readonly KeyBinding[];
  if (tail.length === queueChunk) {
    chunksCopy ??= writes.writable(chunks);
    chunksCopy.push(writes.done(tail));
    nextTail = writes.done(writes.fresh());
  } else nextTail = writes.done(tail);
  if (chunksCopy !== undefined) chunks = writes.done(chunksCopy);
  maps.grants = writes.put(maps.grants, rootId, withKeyQueue(root, Object.freeze({ first, next: queue.next + 1, chunks, tail: nextTail })));
}

/**
 * A keyed call that failed (or timed out, or whose wait for a person ended without an approval)
 * records it on its binding (what a retry after a restart reports); an approved one drops `waiting`
 * (`status` undefined). A completion writes nothing: its binding's status follows from the call
 * having left `inFlight` (idempotency.ts, keyStatus).
 */
export function setKeyStatus(bindings: ShardedMap<DigestBindings>, writes: MapWrites, keyDigest: string, grantId: string, callId: string, status: 'failed' | 'timed_out' | undefined): ShardedMap<DigestBindings> {
  const bound = shardGet(bindings, keyDigest, bindingsDepth);
  const current = bound === undefined ? undefined : isByGrant(bound) ? shardGet(bound.byGrant, grantId) : bound;
  if (current === undefined || current.callId !== callId) return bindings;
  return writes.put(bindings, keyDigest, withBinding(bound, withStatus(current, status)), bindingsDepth);
}

/**
 * What a digest holds once `binding` is its grant's binding: a grant re-binds a digest only once its
 * binding has expired, and the new one replaces it. A second grant's binding makes a map by grant
 * (persistent writes in both folds, so they build the same value; rare).
 */
function withBinding(bound: DigestBindings | undefined, binding: KeyBinding): DigestBindings {
  if (bound === undefined) return binding;
  if (!isByGrant(bound)) {
    if (bound.grantId === binding.grantId) return binding;
    return Object.freeze({ byGrant: shardWith(shardWith(emptyByGrant, bound.grantId, bound), binding.grantId, binding), count: 2 });
  }
  const count = bound.count + (shardGet(bound.byGrant, binding.grantId) === undefined ? 1 : 0);
  return Object.freeze({ byGrant: shardWith(bound.byGrant, binding.grantId, binding), count });
}

/** The bindings without the one call `callId` made on `grantId` under this digest (an evicted queue entry's): unchanged if a later binding replaced it. */
function withoutCall(bindings: ShardedMap<DigestBindings>, writes: MapWrites, keyDigest: string, grantId: string, callId: string): ShardedMap<DigestBindings> {
  const bound = shardGet(bindings, keyDigest, bindingsDepth);
  if (bound === undefined) return bindings;
  if (!isByGrant(bound)) return bound.callId === callId ? writes.remove(bindings, keyDigest, bindingsDepth) : bindings;
  if (shardGet(bound.byGrant, grantId)?.callId !== callId) return bindings;
  const byGrant = shardWithout(bound.byGrant, grantId);
  // Back to a lone binding at one, so equal bindings have one shape whatever their history.
  const rest: DigestBindings = bound.count === 2 ? (shardValues(byGrant).next().value as KeyBinding) : Object.freeze({ byGrant, count: bound.count - 1 });
  return writes.put(bindings, keyDigest, rest, bindingsDepth);
}

const emptyByGrant: ShardedMap<KeyBinding> = Object.freeze([]);

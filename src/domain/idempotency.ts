import { shardGet, type ShardedMap } from './shardedMap';
import type { LedgerState } from './state';

/**
 * Idempotency keys (docs/budgets.md, "Idempotent retries"). Only an admission binds a key: per
 * grant, under the SHA-256 of the key (never the key), together with a digest of the tool and the
 * canonical arguments salted with the key itself, and an expiry in log time. Pure data and lookups,
 * shared by `decide` and both folds (idempotencyFold.ts).
 */

/** What an agent's keyed call brings to the decider: digests only. */
export interface IdempotencyRequest {
  /** SHA-256 (hex) of the key. */
  readonly keyDigest: string;
  /** SHA-256 (hex) over the key, the tool and the canonical arguments (idempotencyDigests). */
  readonly argsDigest: string;
  /** Log time the binding would live until (exclusive): the admission's `at` + the ledger's `idempotencyTtlMs`. */
  readonly expiresAt: number;
}

export type KeyStatus = 'in_flight' | 'completed' | 'failed' | 'timed_out';

/** What the shell adds for the decider: the host's bound on live keys per delegation tree (`idempotencyKeysPerTreeMax`). */
export interface KeyedAdmission extends IdempotencyRequest {
  readonly keysMax: number;
}

/**
 * A live (or expired, not yet evicted) binding of one key on one grant. Its call's status is derived
 * (`keyStatus`): `in_flight` while the call is in `inFlight`, then `completed` unless a failure
 * recorded `status`. So the common settlement, a completion, writes nothing here: a keyed call
 * costs one binding write (at admission) instead of two.
 */
export interface KeyBinding {
  readonly grantId: string;
  readonly callId: string;
  readonly tool: string;
  readonly argsDigest: string;
  readonly expiresAt: number;
  /** Only once its call failed or timed out. */
  readonly status?: 'failed' | 'timed_out';
}

/**
 * The bindings of one key digest by several grants (one key used on several grants: rare), by grant
 * id, with how many there are (back to a lone binding at one). A map, not a list: an agent can bind
 * one key on each of thousands of child grants, and each write must stay O(1).
 */
export interface KeyBindingsByGrant {
  readonly byGrant: ShardedMap<KeyBinding>;
  readonly count: number;
}

/** What `idempotencyBindings` holds under a key digest. */
export type DigestBindings = KeyBinding | KeyBindingsByGrant;

export function isByGrant(value: DigestBindings): value is KeyBindingsByGrant {
  return (value as Partial<KeyBindingsByGrant>).byGrant !== undefined;
}

/**
 * `idempotencyBindings` maps a key digest to its binding, or to a map of them by grant when
 * several grants bound the same key (KeyBindingsByGrant). Keyed by the digest alone (the event's own string) rather than by
 * grant and digest: no 100-character key to build, hash and keep per binding. A sharded map two
 * levels deep (4,096 leaves) rather than three: its entries churn (bound, then evicted a TTL
 * later), and with three levels nearly every live key kept a 64-slot node of its own, which each
 * minor GC copied; with two, the nodes are shared and a write copies two nodes and a leaf. Leaves
 * hold ≈ 2.5 bindings per 10,000 live keys.
 */
export const bindingsDepth = 2;

/** Entries per chunk of a tree's key queue. */
export const queueChunk = 32;

/** Slots per queue entry: `[keyDigest, grantId, callId, expiresAt]`. */
export const entrySlots = 4;

/**
 * The order keys were bound in one delegation tree (per root grant): positions `first … next − 1`,
 * each `[keyDigest, grantId, callId, expiresAt]` (which binding it made: a later binding of the same key on
 * the same grant replaces it in `idempotencyBindings`). Kept on the root's grant record (`keyQueue`),
 * which every admission in the tree rewrites anyway (its usage), so the queue costs no trie path of
 * its own. Kept as full frozen chunks of `queueChunk` entries plus the chunk
 * being filled (`tail`), flat: an admission copies the tail and, once per chunk, the chunk list,
 * and eviction only moves `first`. Position `p` is in chunk `⌊p / queueChunk⌋`; `chunks[0]` is
 * chunk `⌊first / queueChunk⌋`, the tail follows the last full chunk. Bounded by the ledger's
 * `idempotencyKeysPerTreeMax`; expired entries are evicted from the front when the tree binds a new key.
 */
export interface KeyQueue {
  readonly first: number;
  readonly next: number;
  readonly chunks: readonly (readonly (string | number)[])[];
  readonly tail: readonly (string | number)[];
}

/** The grant's binding of this key digest, live or not. */
export function bindingAt(state: LedgerState, grantId: string, keyDigest: string): KeyBinding | undefined {
  const bound = shardGet(state.idempotencyBindings, keyDigest, bindingsDepth);
  if (bound === undefined) return undefined;
  if (isByGrant(bound)) return shardGet(bound.byGrant, grantId);
  return bound.grantId === grantId ? bound : undefined;
}

/** The grant's binding of this key, if it is live at `at` (an expired one is as good as none). */
export function liveBinding(state: LedgerState, grantId: string, keyDigest: string, at: number): KeyBinding | undefined {
  const binding = bindingAt(state, grantId, keyDigest);
  return binding !== undefined && at < binding.expiresAt ? binding : undefined;
}

/** How the binding's call stands: recorded if it failed or timed out, else whether it is still in flight. */
export function keyStatus(state: LedgerState, binding: KeyBinding): KeyStatus {
  if (binding.status !== undefined) return binding.status;
  return shardGet(state.inFlight, binding.callId) !== undefined ? 'in_flight' : 'completed';
}

/** The entry at `position` (first ≤ position < next) of a queue, as its chunk and the offset of its first slot. */
export function queueEntry(queue: KeyQueue, position: number): { readonly chunk: readonly (string | number)[]; readonly at: number } {
  const index = Math.floor(position / queueChunk) - Math.floor(queue.first / queueChunk);
  const chunk = index < queue.chunks.length ? (queue.chunks[index] as readonly (string | number)[]) : queue.tail;
  return { chunk, at: (position % queueChunk) * entrySlots };
}

/**
 * Whether a tree whose root keeps `queue` can bind one more key at `at`: under `keysMax`, or its oldest
 * binding has expired (the fold evicts it first). Otherwise the call is refused rather than an unexpired
 * key forgotten: forgetting one would let its retry run twice.
 */
export function canBindKey(queue: KeyQueue | undefined, at: number, keysMax: number): boolean {
  if (queue === undefined || queue.next - queue.first < keysMax) return true;
  const oldest = queueEntry(queue, queue.first);
  return (oldest.chunk[oldest.at + 3] as number) <= at;
}

/** A failed call's status for its binding. */
export function failedStatus(event: { readonly timedOut?: true }): 'failed' | 'timed_out' {
  return event.timedOut === true ? 'timed_out' : 'failed';
}

export function keyBinding(grantId: string, callId: string, tool: string, argsDigest: string, expiresAt: number): KeyBinding {
  return Object.freeze({ grantId, callId, tool, argsDigest, expiresAt });
}

export function failedBinding(binding: KeyBinding, status: 'failed' | 'timed_out'): KeyBinding {
  return Object.freeze({ grantId: binding.grantId, callId: binding.callId, tool: binding.tool, argsDigest: binding.argsDigest, expiresAt: binding.expiresAt, status });
}

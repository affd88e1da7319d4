import { shardGet, type ShardedMap } from './shardedMap';
import type { LedgerState } from './state';

/**
 * Idempotency keys (docs/budgets.md, "Idempotent retries"). Only an admission binds a key: per
 * grant, under the SHA-256 of the key (never the key), together with a digest of the tool and the
 * canonical arguments salted with the key itself, and an expiry in log time. Pure data and lookups,
 * shared by `decide` and both folds.
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

/** A live (or expired, not yet evicted) binding of one key on one grant. */
export interface KeyBinding {
  readonly callId: string;
  readonly tool: string;
  readonly argsDigest: string;
  readonly expiresAt: number;
  readonly status: KeyStatus;
}

/**
 * The order keys were bound in one delegation tree (per root grant): entries `first … next − 1`
 * of `keyOrder`. Bounded by the ledger's `idempotencyKeysPerTreeMax`; expired entries are evicted from the
 * front when the tree binds a new key.
 */
export interface KeyQueue {
  readonly first: number;
  readonly next: number;
}

/** One position of a tree's queue: which binding it made (a later binding of the same key replaces it in `keys`). */
export interface KeyOrderEntry {
  readonly binding: string;
  readonly callId: string;
  readonly expiresAt: number;
}

/** The key under which `keys` holds a grant's binding (the digest is 64 hex digits, so the split is unambiguous). */
export function bindingKey(grantId: string, keyDigest: string): string {
  return `${grantId} ${keyDigest}`;
}

export function orderKey(rootId: string, position: number): string {
  return `${rootId}#${position}`;
}

/** The grant's binding of this key, if it is live at `at` (an expired one is as good as none). */
export function liveBinding(state: LedgerState, grantId: string, keyDigest: string, at: number): KeyBinding | undefined {
  const binding = shardGet(state.keys, bindingKey(grantId, keyDigest));
  return binding !== undefined && at < binding.expiresAt ? binding : undefined;
}

/**
 * Whether the tree rooted at `rootId` can bind one more key at `at`: under `keysMax`, or its oldest
 * binding has expired (the fold evicts it first). Otherwise the call is refused rather than an unexpired
 * key forgotten: forgetting one would let its retry run twice.
 */
export function canBindKey(queues: ShardedMap<KeyQueue>, order: ShardedMap<KeyOrderEntry>, rootId: string, at: number, keysMax: number): boolean {
  const queue = shardGet(queues, rootId);
  if (queue === undefined || queue.next - queue.first < keysMax) return true;
  const oldest = shardGet(order, orderKey(rootId, queue.first));
  return oldest !== undefined && oldest.expiresAt <= at;
}

/** A settled call's status for its binding. */
export function settledStatus(event: { readonly type: 'call.completed' } | { readonly type: 'call.failed'; readonly timedOut?: true }): KeyStatus {
  if (event.type === 'call.completed') return 'completed';
  return event.timedOut === true ? 'timed_out' : 'failed';
}

export function keyBinding(callId: string, tool: string, argsDigest: string, expiresAt: number, status: KeyStatus): KeyBinding {
  return Object.freeze({ callId, tool, argsDigest, expiresAt, status });
}

import type { IdempotencyRequest } from './events';
import { shardGet, shardValues } from './shardedMap';
import type { DigestBindings, KeyBinding, KeyBindingsByGrant, KeyQueue, LedgerState } from './state';

/**
 * Idempotency keys (docs/budgets.md, "Idempotent retries"). Only an admission (or a call starting to
 * wait for a person, docs/approvals.md) binds a key: per
 * grant, under the SHA-256 of the key (never the key), together with a digest of the tool and the
 * canonical arguments salted with the key itself, and an expiry in log time. Pure data and lookups,
 * shared by `decide` and both folds (idempotencyFold.ts).
 */

export type KeyStatus = 'in_flight' | 'completed' | 'failed' | 'timed_out';

/** What the shell adds for the decider: the host's bound on live keys per delegation tree (`idempotencyKeysPerTreeMax`). */
export interface KeyedAdmission extends IdempotencyRequest {
  readonly keysMax: number;
}

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

/** How the binding's call stands: recorded if it failed or timed out, in flight while it waits for a person or runs. */
export function keyStatus(state: LedgerState, binding: KeyBinding): KeyStatus {
  if (binding.status === 'waiting') return 'in_flight';
  if (binding.status !== undefined) return binding.status;
  return shardGet(state.inFlight, binding.callId) !== undefined ? 'in_flight' : 'completed';
}

/** The entry at `position` (first ≤ position < next) of a queue. */
export function queueEntry(queue: KeyQueue, position: number): KeyBinding {
  const index = Math.floor(position / queueChunk) - Math.floor(queue.first / queueChunk);
  const chunk = index < queue.chunks.length ? (queue.chunks[index] as readonly KeyBinding[]) : queue.tail;
  return chunk[position % queueChunk] as KeyBinding;
}

/**
 * Whether a tree whose root keeps `queue` can bind one more key at `at`: under `keysMax`, or its oldest
 * binding has expired (the fold evicts it first). Otherwise the call is refused rather than an unexpired
 * key forgotten: forgetting one would let its retry run twice.
 */
export function canBindKey(queue: KeyQueue | undefined, at: number, keysMax: number): boolean {
  if (queue === undefined || queue.next - queue.first < keysMax) return true;
  return queueEntry(queue, queue.first).expiresAt <= at;
}

/** A failed call's status for its binding. */
export function failedStatus(event: { readonly timedOut?: true }): 'failed' | 'timed_out' {
  return event.timedOut === true ? 'timed_out' : 'failed';
}

export function keyBinding(keyDigest: string, grantId: string, callId: string, tool: string, argsDigest: string, expiresAt: number): KeyBinding {
  return Object.freeze({ keyDigest, grantId, callId, tool, argsDigest, expiresAt });
}

/** The binding with this status (none: admitted or completed, the plain shape). */
export function withStatus(binding: KeyBinding, status: KeyBinding['status']): KeyBinding {
  if (status === undefined) return keyBinding(binding.keyDigest, binding.grantId, binding.callId, binding.tool, binding.argsDigest, binding.expiresAt);
  return Object.freeze({ keyDigest: binding.keyDigest, grantId: binding.grantId, callId: binding.callId, tool: binding.tool, argsDigest: binding.argsDigest, expiresAt: binding.expiresAt, status });
}

/**
 * Whether a snapshot's key containers have this shape: every binding names its `keyDigest`, and every
 * queue entry is a binding (until perf14 an entry was four flat slots and a binding had no
 * `keyDigest`). The stores skip a snapshot of an older shape and fold the events instead. Never
 * throws: a value that is not a state of this shape is just not current.
 */
export function keyContainersCurrent(state: LedgerState): boolean {
  const isBinding = (value: unknown): boolean => value !== null && typeof value === 'object' && typeof (value as Partial<KeyBinding>).keyDigest === 'string';
  try {
    for (const bound of shardValues(state.idempotencyBindings)) {
      if (isByGrant(bound)) {
        for (const binding of shardValues(bound.byGrant)) if (!isBinding(binding)) return false;
      } else if (!isBinding(bound)) return false;
    }
    for (const grant of shardValues(state.grants)) {
      const queue = grant.keyQueue;
      if (queue === undefined) continue;
      for (const chunk of [...queue.chunks, queue.tail]) for (const entry of chunk) if (!isBinding(entry)) return false;
    }
    return true;
  } catch {
    return false;
  }
}

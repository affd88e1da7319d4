import type { Amounts, GrantScope, MeterAmounts, Reservation } from './events';
import type { JsonObject } from './json';
import { emptyShardedMap, type ShardedMap } from './shardedMap';
import { genesisHash } from './events';

// The state's data types live here with the state (the modules that compute on them import them,
// never the reverse), so src/domain has no import cycle (test/unit/domainImports.test.ts).

/** A grant's kept rate-window admission times (rateWindow.ts): `chunks` concatenated, without the first `skip` times of the first chunk; `count` of them. */
export interface AdmissionTimes {
  readonly chunks: readonly (readonly number[])[];
  readonly skip: number;
  readonly count: number;
}

/**
 * A live (or expired, not yet evicted) binding of one key on one grant. Its call's status is derived
 * (`keyStatus`): `in_flight` while the call is in `inFlight`, then `completed` unless a failure
 * recorded `status`. So the common settlement, a completion, writes nothing here: a keyed call
 * costs one binding write (at admission) instead of two.
 */
export interface KeyBinding {
  /** The key digest it is bound under: the binding is also its tree's queue entry (KeyQueue). */
  readonly keyDigest: string;
  readonly grantId: string;
  readonly callId: string;
  readonly tool: string;
  readonly argsDigest: string;
  readonly expiresAt: number;
  /**
   * `waiting` while its call waits for a person (bound at the request, so a retry replays rather
   * than asks again); `failed` / `timed_out` once its call failed, timed out, or its wait ended
   * without an approval (`failed`). Absent while admitted and after completion.
   */
  readonly status?: 'waiting' | 'failed' | 'timed_out';
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

/**
 * The order keys were bound in one delegation tree (per root grant): positions `first … next − 1`,
 * each the binding that admission made (its `keyDigest`, `grantId`, `callId` and `expiresAt` say
 * which: a later binding of the same key on the same grant replaces it in `idempotencyBindings`,
 * and a failure records its status there on a copy, so an entry is only compared by `callId`). The
 * entry is the binding object itself, one slot, not its four fields copied: an admission copies the
 * tail (on average 16 slots rather than 64) and pushes one. Kept on the root's grant record
 * (`keyQueue`), which every admission in the tree rewrites anyway (its usage), so the queue costs no
 * trie path of its own. Kept as full frozen chunks of `queueChunk` entries plus the chunk being
 * filled (`tail`): an admission copies the tail and, once per chunk, the chunk list, and eviction
 * only moves `first`. Position `p` is in chunk `⌊p / queueChunk⌋`; `chunks[0]` is chunk
 * `⌊first / queueChunk⌋`, the tail follows the last full chunk. Bounded by the ledger's
 * `idempotencyKeysPerTreeMax`; expired entries are evicted from the front when the tree binds a new key.
 */
export interface KeyQueue {
  readonly first: number;
  readonly next: number;
  readonly chunks: readonly (readonly KeyBinding[])[];
  readonly tail: readonly KeyBinding[];
}

export interface ToolRecord {
  readonly name: string;
  readonly inputSchema: JsonObject;
}

export interface GrantRecord {
  readonly grantId: string;
  readonly tokenDigest: string;
  readonly scope: GrantScope;
  readonly revoked: boolean;
  /** Used budget; in-flight reservations count as used. */
  readonly used: Amounts;
  readonly issuedAt: number;
  /** Only on a child grant: its parent's id. */
  readonly parentGrantId?: string;
  /**
   * Only on a child grant: its ancestors' ids, root first (the parent last). Every check of a call
   * walks this list, so a call costs what the chain's depth costs, whatever the tree's size.
   */
  readonly ancestors?: readonly string[];
  /**
   * Only on a root that has been delegated from: how many grants were ever issued anywhere below it
   * (revoked ones included). An agent creates grants without the host, so each tree is bounded
   * (limits.delegatedGrantsPerRootMax).
   */
  readonly descendants?: number;
  /**
   * Only on a grant whose budget caps meters: used (reserved in flight, or charged) per capped meter,
   * its descendants' calls included.
   */
  readonly metersUsed?: MeterAmounts;
  /**
   * Only on a grant with a rate window: the times of its last `rate.calls` admissions (its own and
   * its descendants'), in log order, in frozen chunks (rateWindow.ts).
   */
  readonly admissions?: AdmissionTimes;
  /**
   * Only on a root whose tree has bound idempotency keys: the order they were bound in, for eviction
   * and the bound (KeyQueue).
   */
  readonly keyQueue?: KeyQueue;
}

export interface InFlightCall {
  readonly callId: string;
  readonly grantId: string;
  readonly tool: string;
  readonly reserved: Reservation;
  readonly admittedAt: number;
  readonly seq: number;
  /** Only for a call with a timeout: the log time from which it may be settled as timed out. */
  readonly deadline?: number;
  /** Only for a call made with an idempotency key: its key digest (where its binding is in `idempotencyBindings`). */
  readonly key?: string;
}

/** A call waiting for a person (approval.requested), with what it reserved along its chain. */
export interface PendingApproval {
  readonly approvalId: string;
  readonly callId: string;
  readonly grantId: string;
  readonly tool: string;
  readonly argsDigest: string;
  readonly reserved: Reservation;
  /** Only on a child's call: its ancestors, root first. */
  readonly ancestors?: readonly string[];
  readonly requestedAt: number;
  readonly deadline: number;
  readonly seq: number;
  /** Only for a call made with an idempotency key: its key digest (its binding waits with it). */
  readonly key?: string;
}

/** How an approval ended: as logged, or `revoked` when revoking its grant (or an ancestor) released it. */
export type ApprovalEnd = 'approved' | 'denied' | 'timed_out' | 'revoked';

/** The ledger's projection of its log. Frozen throughout (records by immer, containers by hand: see evolve.ts); equal to `replay(events)`. */
export interface LedgerState {
  /** Position of the last folded event: where the next event chains on. */
  readonly head: { readonly seq: number; readonly hash: string };
  readonly tools: { readonly [name: string]: ToolRecord };
  readonly grants: ShardedMap<GrantRecord>;
  /** tokenDigest → grantId. */
  readonly tokens: ShardedMap<string>;
  readonly inFlight: ShardedMap<InFlightCall>;
  /**
   * Idempotency bindings, key digest → the binding (or, when several grants bound that digest, a
   * map of them by grant); two levels deep (idempotency.ts, bindingsDepth). Each tree's queue of them is on its root's record (`GrantRecord.keyQueue`).
   */
  readonly idempotencyBindings: ShardedMap<DigestBindings>;
  /** Only once a call has waited for approval: the pending ones by approval id (approvalFold.ts). */
  readonly approvals?: ShardedMap<PendingApproval>;
  /** Only once an approval has ended: how, by approval id (so a second use is told from an unknown id). */
  readonly approvalsEnded?: ShardedMap<ApprovalEnd>;
}

export const initialState: LedgerState = Object.freeze({
  head: Object.freeze({ seq: 0, hash: genesisHash }),
  tools: Object.freeze({}),
  grants: Object.freeze(emptyShardedMap<GrantRecord>()),
  tokens: Object.freeze(emptyShardedMap<string>()),
  inFlight: Object.freeze(emptyShardedMap<InFlightCall>()),
  idempotencyBindings: Object.freeze(emptyShardedMap<DigestBindings>()),
}) as LedgerState;

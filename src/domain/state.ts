import type { Amounts, GrantScope, MeterAmounts, Reservation } from './events';
import type { AdmissionTimes } from './rateWindow';
import type { JsonObject } from './json';
import type { DigestBindings, KeyQueue } from './idempotency';
import { emptyShardedMap, type ShardedMap } from './shardedMap';
import { genesisHash } from './events';

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
   * and the bound (idempotency.ts, KeyQueue).
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
}

export const initialState: LedgerState = Object.freeze({
  head: Object.freeze({ seq: 0, hash: genesisHash }),
  tools: Object.freeze({}),
  grants: Object.freeze(emptyShardedMap<GrantRecord>()),
  tokens: Object.freeze(emptyShardedMap<string>()),
  inFlight: Object.freeze(emptyShardedMap<InFlightCall>()),
  idempotencyBindings: Object.freeze(emptyShardedMap<DigestBindings>()),
}) as LedgerState;

import type { JsonObject } from './json';
import type { AttenuationRejectReason, RevocationRejectReason } from './delegationReasons';
import type { HopRefusalReason } from './fetchHop';
import type { RejectReason } from './reasons';

/** Budget amounts: calls and canonical-JSON input bytes. */
export interface Amounts {
  readonly calls: number;
  readonly inputBytes: number;
}

/** Amounts per named meter (e.g. `{ usd_micros: 1_200 }`): non-negative safe integers, names limits.meterNamePattern. */
export interface MeterAmounts {
  readonly [meter: string]: number;
}

/** At most `calls` admissions in any sliding window of `windowMs` ms ending at a call's time. */
export interface RateLimit {
  readonly calls: number;
  readonly windowMs: number;
}

/** A grant's budget: calls and input bytes always; named meters and a rate window when the host sets them. */
export interface GrantBudget extends Amounts {
  readonly meters?: MeterAmounts;
  readonly rate?: RateLimit;
}

/** What a call reserves: one call, its input bytes, and what its tool's `cost(args)` declared (when it has one). */
export interface Reservation extends Amounts {
  readonly meters?: MeterAmounts;
}

/** What a grant allows. Immutable once issued. */
export interface GrantScope {
  readonly tools: readonly string[];
  /** Narrowing JSON Schema per tool name, applied to the whole arguments object. */
  readonly args: { readonly [tool: string]: JsonObject };
  /** Canonical resource scopes: 'x/' covers what is strictly below x/ (an `fs:` one also the folder x), 'x' only x itself. */
  readonly resources: readonly string[];
  readonly notBefore: number;
  readonly expiresAt: number;
  readonly budget: GrantBudget;
  /**
   * How long an admitted call may stay unsettled (ms of log time) before the ledger settles it as
   * timed out. Absent: no timeout. A child's is at most its parent's; a call's deadline uses the
   * least along its chain.
   */
  readonly callTimeoutMs?: number;
  /**
   * Per tool, when a call waits for a person: `true` (every call) or a JSON Schema (calls whose
   * arguments match it). A call's rule is the union over its chain: a child adds, never drops.
   */
  readonly approvals?: ApprovalRules;
  /** How long a call may wait for its approval (ms of log time); the least along the chain, else the ledger's default. */
  readonly approvalTimeoutMs?: number;
}

/** Approval rules per tool name: `true` or a JSON Schema object the arguments are matched against. */
export interface ApprovalRules {
  readonly [tool: string]: true | JsonObject;
}

export interface ToolRegisteredPayload {
  readonly type: 'tool.registered';
  readonly tool: string;
  readonly inputSchema: JsonObject;
}
export interface GrantIssuedPayload {
  readonly type: 'grant.issued';
  readonly grantId: string;
  /** SHA-256 (hex) of the token; the token itself is never stored. */
  readonly tokenDigest: string;
  readonly scope: GrantScope;
  /** Only on a child issued by `attenuate`: the grant it was carved from. */
  readonly parentGrantId?: string;
  /**
   * Only on a child: what its parent had left when it was issued (the least `limit − used` over the
   * parent and its ancestors), so the log itself shows, and `verify` re-checks, that the child's
   * budget was within it.
   */
  readonly parentLeft?: Reservation;
  /**
   * How a shell maps a call's arguments to resources, per tool (e.g. `{ read_file: ['fs:{path}'] }`),
   * recorded so later shells and auditors see them. The decider stores them; it never evaluates them.
   */
  readonly resourceTemplates?: ResourceTemplates;
  /** The directory relative `fs:` template paths resolve against (recorded with the templates). */
  readonly fsBase?: string;
  /**
   * Only on a principal's root grant (the gateway's OAuth principals): whose it is, for which
   * policy, and which generation (the grant id is derived from the three; src/domain/principals.ts).
   */
  readonly principal?: PrincipalRef;
}
/** A principal's grant for a policy, generation 0 at its first session, one more per replacement. */
export interface PrincipalRef {
  readonly name: string;
  readonly policy: string;
  readonly generation: number;
}
/** Per tool, templates over argument names (`"fs:{path}"`, `"fs:{paths[]}"`). */
export interface ResourceTemplates {
  readonly [tool: string]: readonly string[];
}
export interface GrantRevokedPayload {
  readonly type: 'grant.revoked';
  readonly grantId: string;
  readonly abortInFlight: boolean;
  /** Only when an agent revoked it with `revokeDelegation`: the grant (an ancestor) whose token did. */
  readonly revokedBy?: string;
}
export interface CallAdmittedPayload {
  readonly type: 'call.admitted';
  readonly callId: string;
  readonly grantId: string;
  readonly tool: string;
  /** `meters` only when the tool's `cost(args)` named any: reserved on every grant of the chain that caps that meter. */
  readonly reserved: Reservation;
  /**
   * Only on a call of a child grant: its ancestors' ids, root first. The same reservation is made on
   * each of them too (one event for the whole chain).
   */
  readonly ancestors?: readonly string[];
  /**
   * Only when the grant or an ancestor has `callTimeoutMs`: the log time (`at` + the least timeout
   * along the chain) from which the ledger settles the call as timed out if nothing settled it.
   */
  readonly deadline?: number;
  /** Only on a call made with an idempotency key: the binding it makes (digests and expiry, never the key). */
  readonly idempotency?: IdempotencyRequest;
}
/** What an agent's keyed call brings to the decider: digests only. */
export interface IdempotencyRequest {
  /** SHA-256 (hex) of the key. */
  readonly keyDigest: string;
  /** SHA-256 (hex) over the key, the tool and the canonical arguments (idempotencyDigests). */
  readonly argsDigest: string;
  /** Log time the binding would live until (exclusive): the admission's `at` + the ledger's `idempotencyTtlMs`. */
  readonly expiresAt: number;
}

/** Digests of a keyed call's key and of its tool and arguments (what a binding is matched on). */
export interface IdempotencyDigests {
  readonly keyDigest: string;
  readonly argsDigest: string;
}
/**
 * A retry: the same key, tool and canonical arguments as a call the grant admitted, while that
 * binding lives. It reserves nothing and runs nothing; `replayOf` is the first call's id.
 */
export interface CallReplayedPayload {
  readonly type: 'call.replayed';
  readonly callId: string;
  readonly grantId: string;
  readonly tool: string;
  readonly replayOf: string;
  readonly idempotency: IdempotencyDigests;
}
export interface CallRejectedPayload {
  readonly type: 'call.rejected';
  readonly callId: string;
  /** Absent when the token matched no grant. */
  readonly grantId?: string;
  /** The requested tool name, or '(invalid-name)' when it is not a well-formed tool name. */
  readonly tool: string;
  readonly reason: RejectReason;
  /** Canonical input bytes of the call, when the arguments were plain JSON. */
  readonly inputBytes?: number;
  /** On `meter_budget_exhausted` and `rate_limited` (the checks its cost decided or passed): what the tool's `cost(args)` declared. */
  readonly cost?: MeterAmounts;
  /** On `meter_budget_exhausted`: the first meter (in name order) some grant of the chain could not cover. */
  readonly meter?: string;
  /** On `rate_limited`: the least wait (ms, log time) after which the chain's rate windows would admit the call. */
  readonly retryAfterMs?: number;
  /** A keyed call's digests (so `verify` re-derives an idempotency_conflict). */
  readonly idempotency?: IdempotencyDigests;
  /** On `idempotency_keys_exhausted`: the bound on live keys per delegation tree that refused it. */
  readonly keysMax?: number;
}
export interface CallCompletedPayload {
  readonly type: 'call.completed';
  readonly callId: string;
  readonly grantId: string;
  readonly tool: string;
  /**
   * Only on a call that reserved meters: what is finally charged per reserved meter (the tool's
   * `ctx.report`, at most the reservation; the whole reservation without one). The rest is released
   * on the grant and every ancestor.
   */
  readonly charged?: MeterAmounts;
  /** Present (true) when the tool reported more than it reserved (or a meter it did not reserve): it was charged the reservation. */
  readonly overrun?: true;
}
export interface CallFailedPayload {
  readonly type: 'call.failed';
  readonly callId: string;
  readonly grantId: string;
  readonly tool: string;
  /** Budget given back because the host chose `onToolError: 'refund'`; zeros otherwise. */
  readonly refunded: Amounts;
  /** Present (true) when the caller cancelled the call (`invoke`'s `signal` aborted); absent otherwise. */
  readonly cancelled?: true;
  /** As on `call.completed`; all zeros when the reservation is refunded. */
  readonly charged?: MeterAmounts;
  readonly overrun?: true;
  /** Present (true) when the ledger settled the call at or after its `deadline` (callTimeoutMs). */
  readonly timedOut?: true;
}

/**
 * A call that passed every check and needs a person: reserved like an admission (on the grant and
 * every ancestor), it waits until `approval.resolved` or its `deadline` (log time, at most the
 * chain's expiry). `argsDigest` binds the approval to these arguments: SHA-256 over the approval id,
 * the tool and the canonical arguments (salted by the id, so the log gives no guessing oracle).
 */
export interface ApprovalRequestedPayload {
  readonly type: 'approval.requested';
  readonly approvalId: string;
  readonly callId: string;
  readonly grantId: string;
  readonly tool: string;
  readonly argsDigest: string;
  readonly reserved: Reservation;
  /** As on `call.admitted`: only on a child's call, its ancestors, root first. */
  readonly ancestors?: readonly string[];
  readonly deadline: number;
  /** As on `call.admitted`: a keyed call binds its key when it starts waiting (docs/approvals.md). */
  readonly idempotency?: IdempotencyRequest;
}
/** How a person (or the deadline) resolved an approval. */
export type ApprovalOutcome = 'approved' | 'denied' | 'timed_out';
/**
 * The end of a wait: `approved` (the call is admitted from here: in flight, its `deadline` the call
 * timeout from now when the chain has one), `denied` or `timed_out` (the reservation is released).
 * `by` names who decided (absent on a timeout); `note` is their text (approve's note, deny's reason).
 */
export interface ApprovalResolvedPayload {
  readonly type: 'approval.resolved';
  readonly approvalId: string;
  readonly callId: string;
  readonly grantId: string;
  readonly tool: string;
  readonly outcome: ApprovalOutcome;
  readonly by?: string;
  readonly note?: string;
  /** Only on an approval of a call whose chain has `callTimeoutMs`: when the ledger times the call out. */
  readonly deadline?: number;
}

export interface AttenuationRejectedPayload {
  readonly type: 'attenuation.rejected';
  readonly reason: AttenuationRejectReason;
  /** The grant the token belongs to; absent when it matched none. */
  readonly parentGrantId?: string;
}
export interface RevocationRejectedPayload {
  readonly type: 'revocation.rejected';
  readonly reason: RevocationRejectReason;
  /** The grant whose token asked; absent when it matched none. */
  readonly revokedBy?: string;
  /** The grant it asked to revoke, when that names a grant. */
  readonly grantId?: string;
}
/** One hop of a tool's `ctx.fetch` (the request or a redirect) and whether it was allowed. */
export interface FetchHopPayload {
  readonly type: 'fetch.hop';
  readonly callId: string;
  readonly grantId: string;
  readonly tool: string;
  /** 0 for the request, 1… for each redirect. */
  readonly hop: number;
  /** The canonical URL resource (no userinfo, query or fragment); absent when the URL had none. */
  readonly resource?: string;
  /** The address connected to (or that was refused); absent when the host was not resolved. */
  readonly address?: string;
  readonly outcome: 'allowed' | 'refused';
  /** When refused. */
  readonly reason?: HopRefusalReason;
}

export type EventPayload =
  | ToolRegisteredPayload
  | GrantIssuedPayload
  | GrantRevokedPayload
  | CallAdmittedPayload
  | CallRejectedPayload
  | CallReplayedPayload
  | CallCompletedPayload
  | CallFailedPayload
  | AttenuationRejectedPayload
  | RevocationRejectedPayload
  | FetchHopPayload
  | ApprovalRequestedPayload
  | ApprovalResolvedPayload;

export type EventType = EventPayload['type'];

/** Chain fields every stored event carries. */
export interface EventEnvelope {
  readonly seq: number;
  /** Clock reading (ms since epoch) when the command was decided. */
  readonly at: number;
  readonly prevHash: string;
  /** SHA-256 (hex) of the RFC 8785 canonical JSON of the event without `hash`. */
  readonly hash: string;
}

/** An immutable, hash-chained event of the log. */
export type LedgerEvent = EventPayload & EventEnvelope;
export type EventOf<T extends EventType> = Extract<LedgerEvent, { type: T }>;

/** The decision events streamed on `decisions$`. */
export type DecisionEvent = EventOf<'call.admitted'> | EventOf<'call.rejected'>;

export const genesisHash = '0'.repeat(64);

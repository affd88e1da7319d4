import type { FileHandle } from 'node:fs/promises';
import type { Observable } from 'rxjs';
import type { ApprovalRules, DecisionEvent, LedgerEvent, MeterAmounts, RateLimit, ResourceTemplates } from '../domain/events';
import type { LedgerApprovals } from './approvalTypes';
import type { JsonObject } from '../domain/json';
import type { Narrowing } from '../domain/commands';
import type { AttenuationRejectReason, RevocationRejectReason } from '../domain/delegationReasons';
import type { RejectReason } from '../domain/reasons';
import type { KeyStatus } from '../domain/idempotency';
import type { InFlightCall, LedgerState } from '../domain/state';
import type { VisibleTool } from '../domain/visibleTools';
import type { AsyncEventStore, EventStore } from './ports/eventStore';
import type { FollowedLog, LogFollower } from './ports/logFollower';
import type { CheckedFetchInit, CheckedOpenFlags, ResolveHost } from './ports/toolResources';

export interface ToolContext {
  /** Aborted when the grant is revoked with `abortInFlight: true` (or the ledger is closed). */
  readonly signal: AbortSignal;
  readonly callId: string;
  readonly grantId: string;
  /**
   * Opens a file only if its real location is one of this call's checked resources and it is the
   * object that was checked (device, inode); O_NOFOLLOW on the last component. Refusals reject with
   * `ResourceRefusedError` (docs/resources.md).
   */
  open(path: string, flags?: CheckedOpenFlags): Promise<FileHandle>;
  /** Lists a checked directory (the directory itself must be one of the call's resources). */
  readdir(path: string): Promise<string[]>;
  /** Replaces a checked file atomically (temporary file in the checked directory, then a rename). */
  writeFile(path: string, data: string | Uint8Array): Promise<void>;
  /** Renames a checked resource to another checked resource. */
  rename(from: string, to: string): Promise<void>;
  /** `fetch` whose every hop is checked against this call's grant and logged as `fetch.hop`. */
  fetch(url: string | URL, init?: CheckedFetchInit): Promise<Response>;
  /**
   * What the call really used per meter (e.g. `{ usd_micros: 1_200 }`); the last report counts.
   * Settlement charges it, at most what `cost(args)` reserved, and releases the rest; a report above
   * the reservation (or naming a meter not reserved) charges the reservation, flagged `overrun: true`.
   * Without a report the whole reservation is charged. A malformed report throws `TypeError`; one
   * made after the call ended throws `ResourceRefusedError` (`call_not_running`).
   */
  report(usage: MeterAmounts): void;
}

export interface ToolDefinition<Args extends JsonObject = JsonObject, Result = unknown> {
  /** /^[A-Za-z0-9_.-]{1,128}$/ (MCP's rule, case-sensitive) */
  readonly name: string;
  /** JSON Schema for an object, as MCP declares tool inputs. Undeclared properties are refused. */
  readonly inputSchema: JsonObject;
  /**
   * Virtual resources the call touches, e.g. `notes:/drafts/a`. Checked in canonical form. `call`
   * names the grant the call acts for (and its root), for hosts whose mapping differs per grant
   * (the gateway's recorded policy templates).
   */
  readonly resources?: (args: Args, call: ResourceCall) => readonly string[];
  /**
   * The most a call may use per named meter, e.g. `(args) => ({ usd_micros: 50_000 })`: reserved on
   * the grant and every ancestor that caps the meter before the tool runs (docs/budgets.md). A cost
   * that throws or returns anything but meter names to non-negative safe integers refuses the call
   * `invalid_arguments`. Without `cost` a call reserves nothing on any meter.
   */
  readonly cost?: (args: Args) => MeterAmounts;
  readonly run: (args: Args, ctx: ToolContext) => Result | Promise<Result>;
}

/** The grant a call acts for, as a tool's `resources(args, call)` sees it. */
export interface ResourceCall {
  readonly grantId: string;
  /** The root of the grant's delegation chain (the grant itself for a root). */
  readonly rootGrantId: string;
}

export interface Budget {
  readonly calls: number;
  readonly inputBytes: number;
  /** Caps per named meter (at most limits.metersPerGrantMax, names /^[a-z][a-z0-9_]{0,63}$/), e.g. `{ usd_micros: 5_000_000 }`. */
  readonly meters?: MeterAmounts;
  /** A sliding window: at most `calls` admissions (this grant's and its descendants') in any `windowMs`. */
  readonly rate?: RateLimit;
}

export interface IssueOptions {
  readonly tools: readonly string[];
  /** Narrowing JSON Schema per tool, applied to the whole arguments object. */
  readonly args?: { readonly [tool: string]: JsonObject };
  /** Canonical scopes: 'x/' covers what is strictly below x/ (an `fs:` one also the folder x), 'x' only x itself. Default: none. */
  readonly resources?: readonly string[];
  /** Default: the clock reading at issue. */
  readonly notBefore?: number;
  readonly expiresAt: number;
  readonly budget: Budget;
  /**
   * Recorded in the grant's `grant.issued` event for shells that map arguments to resources (the MCP
   * proxy's policy templates, e.g. `{ read_file: ['fs:{path}'] }`). The ledger does not evaluate them.
   */
  readonly resourceTemplates?: ResourceTemplates;
  /** Recorded beside the templates: the directory relative `fs:` template paths resolve against. */
  readonly fsBase?: string;
  /**
   * An admitted call still unsettled this many ms (log time) after its admission is settled by the
   * ledger as `call.failed` with `timedOut: true` (docs/budgets.md). A positive safe integer; default: none.
   */
  readonly callTimeoutMs?: number;
  /**
   * Per tool, when a call waits for a person (docs/approvals.md): `true` for every call, or a JSON
   * Schema its arguments are matched against. Checked after every other rule; the call reserves its
   * budget and waits for `approve`/`deny` or its deadline.
   */
  readonly approvals?: ApprovalRules;
  /** How long a call may wait for approval (ms of log time). Default: the ledger's `approvalTimeoutMs`. */
  readonly approvalTimeoutMs?: number;
  /**
   * Host side, for the gateway's OAuth principals: issue this principal's root grant for this policy
   * (its next generation, with a derived id: docs/gateway.md). Refused (`InvalidCommandError`
   * `invalid_grant`) while the principal still has an active grant for the policy.
   */
  readonly principal?: { readonly name: string; readonly policy: string };
}

export interface InvokeOptions {
  /**
   * Cancels the call: aborted before the tool starts, the tool is skipped; during the run it aborts
   * `ctx.signal`. A call that then fails is settled `call.failed` with `cancelled: true` (charged as
   * `onToolError` says). A tool that still returns a value completes normally.
   */
  readonly signal?: AbortSignal;
}

/** `invoke`'s options for a retryable call: its outcome may then also be a value-less replay (KeyedInvokeOutcome). */
export interface KeyedInvokeOptions extends InvokeOptions {
  /**
   * Makes a retry safe (docs/budgets.md, "Idempotent retries"): 1-255 characters, per grant. A call
   * with the same key, tool and canonical arguments as one this grant admitted (while the key lives,
   * `idempotencyTtlMs`) returns that call's outcome with its `callId` and `replayed: true`, reserving
   * nothing and running nothing; other arguments are `idempotency_conflict`; a malformed key is
   * `invalid_arguments`. Only a digest of the key is logged.
   */
  readonly idempotencyKey: string;
}

export interface IssuedGrant {
  readonly grantId: string;
  /** The bearer token. Shown only here; the ledger keeps only its SHA-256 digest. */
  readonly token: string;
}

export interface RevokeOptions {
  /** Abort the `ctx.signal` of calls of this grant that are running. Default false: they finish. */
  readonly abortInFlight?: boolean;
}

export type InvokeOutcome<Result = unknown> =
  | { readonly status: 'completed'; readonly callId: string; readonly value: Result; readonly replayed?: true }
  | { readonly status: 'failed'; readonly callId: string; readonly error: unknown; readonly replayed?: true }
  | {
      readonly status: 'rejected';
      readonly callId: string;
      readonly reason: RejectReason;
      readonly message: string;
      /** On `rate_limited`: the least wait (ms) after which the rate windows would admit the call. */
      readonly retryAfterMs?: number;
      /** On `meter_budget_exhausted`: the meter that could not cover the call. */
      readonly meter?: string;
    };

/**
 * What a keyed call (`invoke(…, { idempotencyKey })`) may return: any InvokeOutcome (a retry
 * answered from this ledger's memory has `replayed: true` and the first call's `callId`), or, for
 * a retry of a call whose value this ledger object does not hold (it ran in another process,
 * before a restart, or was forgotten: limits.idempotentOutcomesHeldMax), how the first call ended
 * as the log says, without its value (`in_flight` while it still runs elsewhere).
 */
export type KeyedInvokeOutcome<Result = unknown> =
  | InvokeOutcome<Result>
  | { readonly status: 'replayed'; readonly callId: string; readonly replayed: true; readonly settled: KeyStatus };

export interface Usage {
  readonly calls: { readonly limit: number; readonly used: number };
  readonly inputBytes: { readonly limit: number; readonly used: number };
  /** Only on a grant that caps meters: per meter, used counts in-flight reservations and descendants' use. */
  readonly meters?: { readonly [meter: string]: { readonly limit: number; readonly used: number } };
  /** Only on a grant with a rate window: admissions (own and descendants') with `at > now − windowMs`. */
  readonly rate?: { readonly limit: number; readonly windowMs: number; readonly inWindow: number };
}

/**
 * An agent's request to carve a child grant out of its own (`ledger.attenuate`): the decider's
 * `Narrowing` (src/domain/commands.ts documents each field). Every field narrows the parent's; an
 * absent one keeps the parent's (the budget: what the parent has left now).
 */
export type AttenuationRequest = Narrowing;

export type AttenuateOutcome =
  | { readonly status: 'issued'; readonly grantId: string; readonly token: string; readonly parentGrantId: string }
  | { readonly status: 'rejected'; readonly reason: AttenuationRejectReason | 'ledger_unavailable'; readonly message: string };

export type RevokeDelegationOutcome =
  | { readonly status: 'revoked' }
  | { readonly status: 'rejected'; readonly reason: RevocationRejectReason | 'ledger_unavailable'; readonly message: string };

export interface LedgerOptions {
  /** ms since epoch; default Date.now. Every time check and every event's `at` uses it. */
  readonly clock?: () => number;
  /** Default: in memory. An AsyncEventStore (PostgreSQL) needs `openLedger`. */
  readonly store?: EventStore | AsyncEventStore;
  /** Budget of a call whose tool throws: kept ('consume', default) or given back ('refund'). */
  readonly onToolError?: 'consume' | 'refund';
  /** Commands that may wait in the stream; beyond it calls are rejected `ledger_unavailable`. */
  readonly pendingCommandsMax?: number;
  /** Resolver for `ctx.fetch` (default: the system's getaddrinfo); tests inject one. */
  readonly resolveHost?: ResolveHost;
  /**
   * Follows the log as it is committed, e.g. `checkpointPublisher(…)` (agent-tool-capabilities'
   * transparency: a Merkle tree publishing signed checkpoints; docs/transparency.md). Every store
   * (createLedger, or openLedger for PostgreSQL); it may refuse to open the ledger by throwing LedgerError.
   */
  readonly transparency?: LogFollower;
  /**
   * How the ledger waits for call deadlines (callTimeoutMs): schedules `callback` after `delayMs` and
   * returns a function that cancels it. Default: an unref'd `setTimeout`. A timer that fires before
   * `clock()` reaches the deadline just waits again, so tests with an injected clock may inject this
   * too, or leave timers idle and call `ledger.runDueTimeouts()`.
   */
  readonly setTimer?: (callback: () => void, delayMs: number) => () => void;
  /** How long (ms of log time) an admitted call's idempotency key stays bound. Default 86,400,000 (24 h). */
  readonly idempotencyTtlMs?: number;
  /**
   * Unexpired idempotency keys one delegation tree (a root grant and every grant below it) may hold;
   * beyond it a keyed call that would bind a new key is `idempotency_keys_exhausted`. A positive
   * integer, at most and by default `limits.idempotencyKeysPerTreeMax` (10,000).
   */
  readonly idempotencyKeysPerTreeMax?: number;
  /** How long a call waits for approval when no grant of its chain sets `approvalTimeoutMs`. Default 900,000 (15 min). */
  readonly approvalTimeoutMs?: number;
}

export type { FollowedLog, LogFollower };

export interface Ledger extends LedgerApprovals {
  registerTool<Args extends JsonObject = JsonObject, Result = unknown>(tool: ToolDefinition<Args, Result>): Promise<void>;
  issue(options: IssueOptions): Promise<IssuedGrant>;
  revoke(grantId: string, options?: RevokeOptions): Promise<void>;
  invoke<Result = unknown>(token: string, tool: string, args: unknown, options: KeyedInvokeOptions): Promise<KeyedInvokeOutcome<Result>>;
  invoke<Result = unknown>(token: string, tool: string, args: unknown, options?: InvokeOptions): Promise<InvokeOutcome<Result>>;
  /**
   * Host side (trusted), for a host that keeps grants by id rather than by token (the gateway acts
   * for a principal's grant after a restart, when only the token's digest is left): `invoke` exactly
   * as the grant's own token would, every rule in force. Never hand this to an agent.
   */
  invokeAsGrant<Result = unknown>(grantId: string, tool: string, args: unknown, options?: InvokeOptions): Promise<InvokeOutcome<Result>>;
  /** Host side: `visibleTools` of the grant's own token, by grant id. Never throws. */
  visibleToolsOfGrant(grantId: string): readonly VisibleTool[];
  /** Agent side: a child grant inside the token's own on every dimension. Never throws; a refusal is logged. */
  attenuate(token: string, request: AttenuationRequest): Promise<AttenuateOutcome>;
  /** Agent side: revoke a grant strictly below the token's own (and so its whole subtree). Never throws. */
  revokeDelegation(token: string, grantId: string, options?: RevokeOptions): Promise<RevokeDelegationOutcome>;
  readonly events$: Observable<LedgerEvent>;
  readonly decisions$: Observable<DecisionEvent>;
  usage(grantId: string): Usage;
  /**
   * The tools this token may call now, each with its input schema and the narrowing schemas of its
   * grant's chain (root's first). Empty for an unknown token, or when the grant is revoked, not yet
   * valid or expired; a spent budget still lists them. Never throws.
   */
  visibleTools(token: string): readonly VisibleTool[];
  events(): readonly LedgerEvent[];
  state(): LedgerState;
  /** Calls admitted but not yet completed or failed (after a restart: calls a crash left open). */
  inFlight(): readonly InFlightCall[];
  /**
   * Settles now, as timed out, every call in flight whose deadline `clock()` has reached (what the
   * timers do on their own), except calls whose settlement this ledger has already decided and is
   * still appending. Resolves with how many it timed out. For tests and hosts that drive time.
   */
  runDueTimeouts(): Promise<number>;
  close(): Promise<void>;
}

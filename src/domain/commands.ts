import type { Amounts, ApprovalOutcome, ApprovalRules, GrantScope, MeterAmounts, PrincipalRef, RateLimit, ResourceTemplates } from './events';
import type { KeyedAdmission } from './idempotency';
import type { JsonObject } from './json';
import type { ArgumentCheck, ResourceCheck } from './reasons';

/**
 * Commands carry everything the decider needs, including the time (`at`) and the ids the shell
 * generated, so `decide` reads no clock and draws no randomness. Checks that need host code
 * (JSON Schema validators, the tool's `resources(args)`) are evaluated by the shell and arrive as
 * their outcome; argument values never enter the core.
 */
export interface RegisterToolCommand {
  readonly type: 'registerTool';
  readonly at: number;
  readonly tool: string;
  readonly inputSchema: JsonObject;
}
export interface IssueCommand {
  readonly type: 'issue';
  readonly at: number;
  readonly grantId: string;
  readonly tokenDigest: string;
  readonly scope: GrantScope;
  readonly resourceTemplates?: ResourceTemplates;
  readonly fsBase?: string;
  readonly principal?: PrincipalRef;
}
export interface RevokeCommand {
  readonly type: 'revoke';
  readonly at: number;
  readonly grantId: string;
  readonly abortInFlight: boolean;
}
export interface AdmitCommand {
  readonly type: 'admit';
  readonly at: number;
  readonly callId: string;
  /** The grant the token resolved to, or undefined when it matched none. */
  readonly grantId: string | undefined;
  /** Requested tool name as logged (already reduced to '(invalid-name)' when malformed). */
  readonly tool: string;
  /** Canonical input bytes; undefined when the arguments are not plain JSON. */
  readonly inputBytes: number | undefined;
  readonly argumentCheck: ArgumentCheck;
  readonly resourceCheck: ResourceCheck;
  /**
   * What the tool's `cost(args)` declared (evaluated by the shell once the argument and resource
   * checks passed); undefined when the tool has no cost, it was not evaluated, or it named no meter.
   */
  readonly cost?: MeterAmounts;
  /** Only for a call made with a (well-formed) idempotency key; a malformed key arrives as `argumentCheck: 'invalid_arguments'`. */
  readonly idempotency?: KeyedAdmission;
  /**
   * Only when the shell found that the chain's approval rules ask a person about this call (a `true`
   * rule, or a schema the arguments match): the id it drew, the arguments' digest, and the ledger's
   * default wait (used when no grant of the chain sets `approvalTimeoutMs`).
   */
  readonly approval?: ApprovalAsk;
}
/** What the shell adds to an admit command whose call needs a person. */
export interface ApprovalAsk {
  readonly approvalId: string;
  readonly argsDigest: string;
  readonly defaultTimeoutMs: number;
}
/** A person (approve/deny, with `by`) or the deadline (`timed_out`) resolves a pending approval. */
export interface ResolveApprovalCommand {
  readonly type: 'resolveApproval';
  readonly at: number;
  readonly approvalId: string;
  readonly outcome: ApprovalOutcome;
  readonly by?: string;
  readonly note?: string;
}
export interface SettleCommand {
  readonly type: 'settle';
  readonly at: number;
  readonly callId: string;
  readonly outcome: 'completed' | 'failed';
  /** On failure: give the reservation back (onToolError: 'refund'). */
  readonly refund: boolean;
  /** The caller cancelled the call: a failure is logged with `cancelled: true`. */
  readonly cancelled?: boolean;
  /** The tool's last `ctx.report(usage)`, when it made one (clamped to the reservation by `decide`). */
  readonly report?: MeterAmounts;
  /**
   * Only when `verify` re-decides a logged settlement: the log says the report overran (the report
   * itself is not logged, only its clamped charge).
   */
  readonly overrunLogged?: boolean;
}
/** The shell's timer (or a reopened ledger) settles a call whose deadline has come: refused before it. */
export interface TimeoutCommand {
  readonly type: 'timeout';
  readonly at: number;
  readonly callId: string;
  /** Give the reservation back (onToolError: 'refund'), as for a failed tool. */
  readonly refund: boolean;
}

/** A well-formed attenuation request: each field narrows the parent's; an absent one keeps it. */
export interface Narrowing {
  /** A subset of the parent's tools. */
  readonly tools?: readonly string[];
  /** More narrowing per tool (no `pattern`/`patternProperties`); a call must pass every ancestor's too. */
  readonly args?: { readonly [tool: string]: JsonObject };
  /** Each covered by one of the parent's scopes. */
  readonly resources?: readonly string[];
  /** Inside the parent's window. */
  readonly notBefore?: number;
  readonly expiresAt?: number;
  /**
   * Each at most what the parent (and every ancestor) has left now. `meters`: each at most what the
   * chain has left of it (a meter no ancestor caps is the child's own cap); meters not named keep the
   * chain's left. `rate`: the child's own extra window (its ancestors' always apply).
   */
  readonly budget?: { readonly calls?: number; readonly inputBytes?: number; readonly meters?: MeterAmounts; readonly rate?: RateLimit };
  /** At most the parent's (any positive value when the parent has none). */
  readonly callTimeoutMs?: number;
  /** More approval rules (the ancestors' always apply too). */
  readonly approvals?: ApprovalRules;
  /** At most the parent's (any positive value when the parent has none). */
  readonly approvalTimeoutMs?: number;
}

/**
 * What the decider knows of an attenuation request: its parsed narrowing; that the shell found it
 * malformed (`invalid`: a shape or schema check that runs host code); or, when `verify` re-decides
 * a logged refusal, that the log recorded it as widening (the log does not hold the request).
 */
export type AttenuationRequest =
  | { readonly kind: 'narrowing'; readonly narrowing: Narrowing }
  | { readonly kind: 'invalid' }
  | { readonly kind: 'widens' };

export interface AttenuateCommand {
  readonly type: 'attenuate';
  readonly at: number;
  /** The grant the agent's token resolved to, or undefined when it matched none. */
  readonly parentGrantId: string | undefined;
  /** Ids the shell generated for the child. */
  readonly grantId: string;
  readonly tokenDigest: string;
  readonly request: AttenuationRequest;
}

export interface RevokeDelegationCommand {
  readonly type: 'revokeDelegation';
  readonly at: number;
  /** The grant the agent's token resolved to, or undefined when it matched none. */
  readonly byGrantId: string | undefined;
  /** The grant to revoke (undefined when the request named none). */
  readonly grantId: string | undefined;
  readonly abortInFlight: boolean;
}

/** One hop of a running call's `ctx.fetch`, with what the shell resolved (see fetchHop.ts). */
export interface HopCommand {
  readonly type: 'hop';
  readonly at: number;
  readonly callId: string;
  readonly hop: number;
  readonly resource: string | undefined;
  readonly address: string | undefined;
}

export type Command = RegisterToolCommand | IssueCommand | RevokeCommand | AdmitCommand | SettleCommand | AttenuateCommand | RevokeDelegationCommand | HopCommand | TimeoutCommand | ResolveApprovalCommand;

export type { Amounts };

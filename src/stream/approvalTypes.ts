import type { Observable } from 'rxjs';
import type { EventOf } from '../domain/events';

/** A call waiting for a person, as `pendingApprovals()` lists it (never its arguments). */
export interface PendingApprovalView {
  readonly approvalId: string;
  readonly callId: string;
  readonly grantId: string;
  readonly tool: string;
  /** SHA-256 over the approval id, the tool and the call's canonical arguments (docs/approvals.md). */
  readonly argsDigest: string;
  readonly requestedAt: number;
  /** Log time at which it times out (`approval_timeout`) unless approved or denied first. */
  readonly deadline: number;
}

/** Why `approve`/`deny` changed nothing: no such approval, already resolved (used once), or past its deadline. */
export type ApprovalRefusal = 'unknown_approval' | 'approval_resolved' | 'approval_expired';

export interface ApproveOptions {
  /** Who decided (recorded in the event): 1-256 characters without control characters. */
  readonly by: string;
  /** At most 2,000 characters, recorded as the event's `note`. */
  readonly note?: string;
}

export interface DenyOptions {
  readonly by: string;
  /** Why (at most 2,000 characters), recorded as the event's `note`. Never shown to the agent. */
  readonly reason?: string;
}

export type ApproveOutcome = { readonly status: 'approved' } | { readonly status: 'refused'; readonly reason: ApprovalRefusal };
export type DenyOutcome = { readonly status: 'denied' } | { readonly status: 'refused'; readonly reason: ApprovalRefusal };

/** The approval events, as `approvals$` streams them. A revocation ends waits through `grant.revoked` (on `events$`). */
export type ApprovalEvent = EventOf<'approval.requested'> | EventOf<'approval.resolved'>;

/** The host's approval surface of a ledger (docs/approvals.md). */
export interface LedgerApprovals {
  /** Calls waiting for a person now, oldest first (other writers' too, once folded). */
  pendingApprovals(): readonly PendingApprovalView[];
  /** Lets the waiting call run (its invoke then runs the tool). Malformed `by`/`note` throws TypeError. */
  approve(approvalId: string, options: ApproveOptions): Promise<ApproveOutcome>;
  /** Refuses it: the reservation is released and the invoke resolves rejected `approval_denied`. */
  deny(approvalId: string, options: DenyOptions): Promise<DenyOutcome>;
  readonly approvals$: Observable<ApprovalEvent>;
}

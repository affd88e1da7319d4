import type { LedgerEvent } from '../../domain/events';
import { evolve } from '../../domain/evolve';
import { admissionsInWindow } from '../../domain/rateWindow';
import { shardGet, shardValues } from '../../domain/shardedMap';
import { initialState, type LedgerState } from '../../domain/state';
import { addAmounts, gaugesOf, type Gauge } from './gauges';

/** One decision (admission or rejection) as the table shows and exports it. */
export interface DecisionRow {
  readonly seq: number;
  readonly at: number;
  readonly grantId: string | null;
  readonly tool: string | null;
  /** `asked`: the call passed every check and waited for a person (`approval.requested`). */
  readonly decision: 'admitted' | 'rejected' | 'asked';
  readonly reason: string | null;
  readonly bytes: number | null;
  readonly callId: string | null;
  /** The stored body as received: what the export writes. */
  readonly text: string;
}

export type Outcome = 'completed' | 'failed' | 'timed out' | 'cancelled';

/** A call still running, as the budgets panel lists it under the grant that made it. */
export interface PendingCall {
  readonly callId: string;
  readonly tool: string;
  readonly admittedAt: number;
  /** The core's deadline (admission `at` + the least `callTimeoutMs` along the chain), if any. */
  readonly deadline: number | undefined;
  /** Ms from `now` to the deadline (0 once due); undefined for a call without a timeout. */
  readonly leftMs: number | undefined;
}

/** A grant as read off its `grant.issued` (and `grant.revoked`), for lists and the tree's labels. */
export interface GrantInfo {
  readonly grantId: string;
  readonly parentGrantId: string | undefined;
  readonly issuedSeq: number;
  readonly issuedAt: number;
  readonly expiresAt: number;
  /** Revoked by its own `grant.revoked` (an ancestor's revocation is the tree's to say). */
  readonly revoked: boolean;
  readonly tools: readonly string[];
}

const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const num = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

/**
 * The page's projection of the log. State is the core's own fold (`evolve`, the same rule the
 * ledger and `replay` use), so budgets light up as the core learns new event kinds; the rest
 * (decision rows, settlements, grant parents) is read off the events for display only.
 */
export class AuditModel {
  state: LedgerState = initialState;
  readonly decisions: DecisionRow[] = [];
  readonly outcomes = new Map<string, Outcome>();
  /** Per call that waited for a person: its approval id, and how a person (or the deadline) resolved it. */
  readonly approvalIds = new Map<string, string>();
  readonly approvals = new Map<string, string>();
  readonly grants = new Map<string, GrantInfo>();
  readonly rejections: { at: number; reason: string }[] = [];
  readonly tools = new Set<string>();
  readonly reasons = new Set<string>();
  /** Events the core fold refused (malformed); the integrity panel says why. */
  unfoldable = 0;
  lastSeq = 0;
  /** The latest event time seen (log time). */
  lastAt = 0;
  /** Whether any grant has a rate window (its gauge changes as time passes, with no new event). */
  rateWindows = false;

  add(seq: number, event: Record<string, unknown>, text: string): void {
    this.lastSeq = Math.max(this.lastSeq, seq);
    this.lastAt = Math.max(this.lastAt, num(event.at) ?? 0);
    try {
      this.state = evolve(this.state, event as unknown as LedgerEvent);
    } catch {
      this.unfoldable++;
    }
    const type = event.type;
    if (type === 'call.admitted' || type === 'call.rejected' || type === 'approval.requested') this.addDecision(seq, event, text, type);
    else if (type === 'approval.resolved') this.addResolution(event);
    else if (type === 'call.completed' || type === 'call.failed') {
      const callId = str(event.callId);
      if (callId !== null) this.outcomes.set(callId, type === 'call.completed' ? 'completed' : event.timedOut === true ? 'timed out' : event.cancelled === true ? 'cancelled' : 'failed');
    } else if (type === 'grant.issued') this.addGrant(seq, event);
    else if (type === 'grant.revoked') {
      const grant = this.grants.get(str(event.grantId) ?? '');
      if (grant !== undefined) this.grants.set(grant.grantId, { ...grant, revoked: true });
    }
  }

  private addDecision(seq: number, event: Record<string, unknown>, text: string, type: 'call.admitted' | 'call.rejected' | 'approval.requested'): void {
    const reserved = event.reserved as Record<string, unknown> | undefined;
    const row: DecisionRow = {
      seq,
      at: num(event.at) ?? 0,
      grantId: str(event.grantId),
      tool: str(event.tool),
      decision: type === 'call.admitted' ? 'admitted' : type === 'approval.requested' ? 'asked' : 'rejected',
      reason: type === 'call.rejected' ? str(event.reason) : null,
      bytes: type === 'call.rejected' ? num(event.inputBytes) : num(reserved?.inputBytes),
      callId: str(event.callId),
      text,
    };
    this.decisions.push(row);
    const approvalId = str(event.approvalId);
    if (type === 'approval.requested' && row.callId !== null && approvalId !== null) this.approvalIds.set(row.callId, approvalId);
    if (row.tool !== null) this.tools.add(row.tool);
    if (row.reason !== null) {
      this.reasons.add(row.reason);
      if (num(event.at) !== null) this.rejections.push({ at: row.at, reason: row.reason });
    }
  }

  /** A wait's end as the table says it: `approved by alice`, `denied by bob`, `approval timed out`. */
  private addResolution(event: Record<string, unknown>): void {
    const callId = str(event.callId);
    const by = str(event.by);
    const outcome = str(event.outcome);
    if (callId === null || outcome === null) return;
    this.approvals.set(callId, outcome === 'timed_out' ? 'approval timed out' : `${outcome}${by !== null ? ` by ${by}` : ''}`);
  }

  private addGrant(seq: number, event: Record<string, unknown>): void {
    const grantId = str(event.grantId);
    if (grantId === null) return;
    const scope = (event.scope ?? {}) as Record<string, unknown>;
    if (((scope.budget ?? {}) as Record<string, unknown>).rate !== undefined) this.rateWindows = true;
    this.grants.set(grantId, {
      grantId,
      parentGrantId: str(event.parentGrantId) ?? undefined,
      issuedSeq: seq,
      issuedAt: num(event.at) ?? 0,
      expiresAt: num(scope.expiresAt) ?? 0,
      revoked: false,
      tools: Array.isArray(scope.tools) ? scope.tools.filter((t): t is string => typeof t === 'string') : [],
    });
  }

  /** In-flight reservations per grant id (the grant that made the call). */
  inFlightByGrant(): Map<string, Record<string, unknown>> {
    const sums = new Map<string, Record<string, unknown>>();
    for (const call of shardValues(this.state.inFlight)) {
      const sum = sums.get(call.grantId) ?? {};
      addAmounts(sum, call.reserved as unknown as Record<string, unknown>);
      sums.set(call.grantId, sum);
    }
    return sums;
  }

  /**
   * Running calls per grant id at `now` (the page's clock), soonest deadline first, calls without a
   * timeout last. The deadline is the one the core decided at admission and `evolve` keeps on the
   * in-flight record (`verify` re-derives it), so the page computes no timeout of its own.
   */
  pendingByGrant(now: number): Map<string, PendingCall[]> {
    const byGrant = new Map<string, PendingCall[]>();
    for (const call of shardValues(this.state.inFlight)) {
      const list = byGrant.get(call.grantId) ?? [];
      const deadline = call.deadline;
      list.push({ callId: call.callId, tool: call.tool, admittedAt: call.admittedAt, deadline, leftMs: deadline === undefined ? undefined : Math.max(0, deadline - now) });
      byGrant.set(call.grantId, list);
    }
    const key = (c: PendingCall): number => c.deadline ?? Number.POSITIVE_INFINITY;
    for (const list of byGrant.values()) list.sort((a, b) => key(a) - key(b) || a.admittedAt - b.admittedAt);
    return byGrant;
  }

  /** Whether any running call has a deadline (its countdown changes as time passes, with no new event). */
  hasDeadlines(): boolean {
    for (const call of shardValues(this.state.inFlight)) if (call.deadline !== undefined) return true;
    return false;
  }

  /** A grant's gauges from the folded state; `inFlight` is what its subtree's running calls hold. */
  gauges(grantId: string, inFlight: Record<string, unknown>, now?: number): Gauge[] {
    const grant = shardGet(this.state.grants, grantId);
    if (grant === undefined) return [];
    // Meters used live beside the amounts in the record (issue 12): the gauges read them as `used.meters`.
    const used = grant.metersUsed === undefined ? grant.used : { ...grant.used, meters: grant.metersUsed };
    const gauges = gaugesOf(grant.scope.budget as unknown as Record<string, unknown>, used as unknown as Record<string, unknown>, inFlight);
    const rate = grant.scope.budget.rate;
    // The rate window at `now` (the page's clock; without it, the log's last event time): admissions,
    // own and descendants', in the last windowMs, of the window's limit. Running calls are among them.
    if (rate !== undefined) gauges.push({ key: 'rate', label: `calls per ${windowText(rate.windowMs)}`, limit: rate.calls, used: admissionsInWindow(grant.admissions, rate, now ?? this.lastAt), inFlight: 0 });
    return gauges;
  }

  outcomeOf(row: DecisionRow): string | null {
    if (row.decision === 'asked' && row.callId !== null) return this.approvalOutcome(row.callId);
    if (row.decision !== 'admitted' || row.callId === null) return null;
    return this.outcomes.get(row.callId) ?? 'in flight';
  }

  /** A waiting call: pending, revoked while waiting, or its resolution (and, once approved, how the call ended). */
  private approvalOutcome(callId: string): string {
    const resolved = this.approvals.get(callId);
    if (resolved !== undefined) return resolved.startsWith('approved') ? `${resolved}, ${this.outcomes.get(callId) ?? 'in flight'}` : resolved;
    const approvalId = this.approvalIds.get(callId);
    const ended = approvalId === undefined || this.state.approvalsEnded === undefined ? undefined : shardGet(this.state.approvalsEnded, approvalId);
    return ended === 'revoked' ? 'revoked while waiting' : 'waiting for approval';
  }
}

/** Time left as a countdown reads: `1 h 5 min`, `4 min 10 s`, `9 s` (whole seconds, rounded up). */
export function leftText(ms: number): string {
  const seconds = Math.ceil(Math.max(0, ms) / 1_000);
  const h = Math.floor(seconds / 3_600);
  const min = Math.floor((seconds % 3_600) / 60);
  const s = seconds % 60;
  if (h > 0) return `${h} h ${min} min`;
  if (min > 0) return `${min} min ${s} s`;
  return `${s} s`;
}

/** A window length as a reader says it: `1 h`, `30 s`, `1500 ms`. */
export function windowText(ms: number): string {
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['min', 60_000], ['s', 1_000]] as const) if (ms >= size && ms % size === 0) return `${ms / size} ${unit}`;
  return `${ms} ms`;
}

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
  readonly decision: 'admitted' | 'rejected';
  readonly reason: string | null;
  readonly bytes: number | null;
  readonly callId: string | null;
  /** The stored body as received: what the export writes. */
  readonly text: string;
}

export type Outcome = 'completed' | 'failed' | 'timed out' | 'cancelled';

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
    if (type === 'call.admitted' || type === 'call.rejected') this.addDecision(seq, event, text, type);
    else if (type === 'call.completed' || type === 'call.failed') {
      const callId = str(event.callId);
      if (callId !== null) this.outcomes.set(callId, type === 'call.completed' ? 'completed' : event.timedOut === true ? 'timed out' : event.cancelled === true ? 'cancelled' : 'failed');
    } else if (type === 'grant.issued') this.addGrant(seq, event);
    else if (type === 'grant.revoked') {
      const grant = this.grants.get(str(event.grantId) ?? '');
      if (grant !== undefined) this.grants.set(grant.grantId, { ...grant, revoked: true });
    }
  }

  private addDecision(seq: number, event: Record<string, unknown>, text: string, type: 'call.admitted' | 'call.rejected'): void {
    const reserved = event.reserved as Record<string, unknown> | undefined;
    const row: DecisionRow = {
      seq,
      at: num(event.at) ?? 0,
      grantId: str(event.grantId),
      tool: str(event.tool),
      decision: type === 'call.admitted' ? 'admitted' : 'rejected',
      reason: type === 'call.rejected' ? str(event.reason) : null,
      bytes: type === 'call.admitted' ? num(reserved?.inputBytes) : num(event.inputBytes),
      callId: str(event.callId),
      text,
    };
    this.decisions.push(row);
    if (row.tool !== null) this.tools.add(row.tool);
    if (row.reason !== null) {
      this.reasons.add(row.reason);
      if (num(event.at) !== null) this.rejections.push({ at: row.at, reason: row.reason });
    }
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

  outcomeOf(row: DecisionRow): Outcome | 'in flight' | null {
    if (row.decision !== 'admitted' || row.callId === null) return null;
    return this.outcomes.get(row.callId) ?? 'in flight';
  }
}

/** A window length as a reader says it: `1 h`, `30 s`, `1500 ms`. */
export function windowText(ms: number): string {
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['min', 60_000], ['s', 1_000]] as const) if (ms >= size && ms % size === 0) return `${ms / size} ${unit}`;
  return `${ms} ms`;
}

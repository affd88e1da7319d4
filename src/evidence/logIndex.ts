import type { LedgerEvent } from '../domain/events';

type Decision = Extract<LedgerEvent, { type: 'call.admitted' | 'call.rejected' }>;
type Settlement = Extract<LedgerEvent, { type: 'call.completed' | 'call.failed' }>;

/** Lookups over one log by call id and grant id, built once. */
export class LogIndex {
  readonly decisions = new Map<string, Decision>();
  readonly settlements = new Map<string, Settlement>();
  readonly revocations = new Map<string, Extract<LedgerEvent, { type: 'grant.revoked' }>>();
  readonly grants = new Map<string, Extract<LedgerEvent, { type: 'grant.issued' }>>();

  constructor(readonly events: readonly LedgerEvent[]) {
    for (const e of events) {
      if (e.type === 'call.admitted' || e.type === 'call.rejected') {
        if (!this.decisions.has(e.callId)) this.decisions.set(e.callId, e);
      } else if (e.type === 'call.completed' || e.type === 'call.failed') {
        if (!this.settlements.has(e.callId)) this.settlements.set(e.callId, e);
      } else if (e.type === 'grant.revoked') {
        if (!this.revocations.has(e.grantId)) this.revocations.set(e.grantId, e);
      } else if (e.type === 'grant.issued') {
        if (!this.grants.has(e.grantId)) this.grants.set(e.grantId, e);
      }
    }
  }

  /** Every decision about a grant's calls, in log order. */
  decisionsFor(grantId: string): Decision[] {
    return Array.from(this.decisions.values()).filter((d) => d.grantId === grantId);
  }
}

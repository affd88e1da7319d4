import type { Meter, ObservableGauge, ObservableResult, Span } from '@opentelemetry/api';
import type { EventOf } from '../domain/events';
import type { Ledger } from '../stream/types';

/** The approval metric: how many calls wait for a person now (docs/approvals.md). */
export const pendingApprovalsMetric = 'atc.approvals.pending';

/** A call's wait as the log recorded it: the request, and its resolution once there is one. */
export interface CallApproval {
  requested?: EventOf<'approval.requested'>;
  resolved?: EventOf<'approval.resolved'>;
}

/**
 * The wait as span events on the call's span, at the log's times: `atc.approval.requested` (its
 * approval id and deadline) and `atc.approval.resolved` (outcome, and who decided). A person's
 * name is host data; no argument value or token is in either event.
 */
export function addApprovalEvents(span: Span, approval: CallApproval | undefined): void {
  const requested = approval?.requested;
  if (requested === undefined) return;
  span.addEvent('atc.approval.requested', { 'atc.approval.id': requested.approvalId, 'atc.approval.deadline': requested.deadline, 'atc.event.seq': requested.seq, 'atc.event.hash': requested.hash }, requested.at);
  const resolved = approval?.resolved;
  if (resolved === undefined) return;
  const attributes: Record<string, string | number> = { 'atc.approval.id': resolved.approvalId, 'atc.approval.outcome': resolved.outcome, 'atc.event.seq': resolved.seq, 'atc.event.hash': resolved.hash };
  if (resolved.by !== undefined) attributes['atc.approval.by'] = resolved.by;
  span.addEvent('atc.approval.resolved', attributes, resolved.at);
}

/** The pending-approvals gauge, observed from the ledger's folded state; returns what removes it. */
export function pendingApprovalsGauge(meter: Meter, ledger: Ledger): () => void {
  const gauge: ObservableGauge = meter.createObservableGauge(pendingApprovalsMetric, { description: 'Calls waiting for a person (approval requested, not yet approved, denied, timed out or released)', unit: '{call}' });
  const observe = (result: ObservableResult): void => {
    try {
      result.observe(ledger.pendingApprovals().length);
    } catch {
      // A closed or failing store reports nothing rather than a wrong count.
    }
  };
  gauge.addCallback(observe);
  return () => gauge.removeCallback(observe);
}

import { evolve, grantOf, initialState, verify, type LedgerEvent, type LedgerState } from '../../src';

/** What a client process acknowledged: the outcome `invoke` resolved to. */
export interface Acknowledged {
  readonly grant: string;
  readonly callId: string;
  readonly status: 'completed' | 'failed' | 'rejected';
  readonly reason?: string;
}

/**
 * Bank-style invariants over a whole stored history, checked at every prefix: seq runs 1, 2, 3…
 * without a gap, no grant (nor any ancestor of one) is ever over its call or byte budget, every acknowledged call has its
 * decision in the log (an admission for a call that ran, a rejection for one that was refused), and
 * `verify` is clean. Returns the violations found (empty: the history is correct).
 */
export function checkHistory(events: readonly LedgerEvent[], acknowledged: readonly Acknowledged[]): string[] {
  const violations: string[] = [];
  let state: LedgerState = initialState;
  const admitted = new Set<string>();
  const rejected = new Set<string>();
  events.forEach((event, i) => {
    if (event.seq !== i + 1) violations.push(`gap or reorder: position ${i + 1} holds seq ${event.seq}`);
    state = evolve(state, event);
    if (event.type === 'call.admitted') {
      admitted.add(event.callId);
      // Every grant the admission reserved on: its own and each ancestor's in a delegation tree.
      const own = grantOf(state, event.grantId);
      for (const grantId of [...(own?.ancestors ?? []), event.grantId]) {
        const grant = grantOf(state, grantId);
        if (grant === undefined) continue;
        const { calls, inputBytes } = grant.scope.budget;
        if (grant.used.calls > calls) violations.push(`seq ${event.seq}: grant ${grantId} over its call budget (${grant.used.calls} > ${calls})`);
        if (grant.used.inputBytes > inputBytes) violations.push(`seq ${event.seq}: grant ${grantId} over its byte budget (${grant.used.inputBytes} > ${inputBytes})`);
      }
    }
    if (event.type === 'call.rejected') rejected.add(event.callId);
  });
  for (const ack of acknowledged) {
    if ((ack.status === 'completed' || ack.status === 'failed') && !admitted.has(ack.callId)) violations.push(`acknowledged call ${ack.callId} (${ack.status}) has no admission in the log`);
    if (ack.status === 'rejected' && ack.reason !== 'ledger_unavailable' && !rejected.has(ack.callId)) violations.push(`acknowledged rejection ${ack.callId} has no call.rejected in the log`);
  }
  const verified = verify(events);
  for (const problem of verified.problems.slice(0, 20)) violations.push(`verify: seq ${problem.seq} ${problem.code}: ${problem.message}`);
  return violations;
}

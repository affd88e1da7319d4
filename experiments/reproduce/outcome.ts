import type { KeyedInvokeOutcome } from '../../src';
import type { Observed } from '../../src/evidence/types';

/** What an `invoke` result says about the decision (the value and error are left out on purpose). */
export function observedOf(outcome: KeyedInvokeOutcome): Observed {
  if (outcome.status === 'rejected') return { outcome: 'rejected', reason: outcome.reason, callId: outcome.callId, status: 'rejected' };
  // A value-less replay (a retry of a call this ledger no longer holds): how the first call ended.
  if (outcome.status === 'replayed') return { outcome: 'admitted', callId: outcome.callId, status: outcome.settled === 'completed' ? 'completed' : 'failed' };
  return { outcome: 'admitted', callId: outcome.callId, status: outcome.status };
}

import type { InvokeOutcome } from '../../src';
import type { Observed } from '../evidence/types';

/** What an `invoke` result says about the decision (the value and error are left out on purpose). */
export function observedOf(outcome: InvokeOutcome): Observed {
  if (outcome.status === 'rejected') return { outcome: 'rejected', reason: outcome.reason, callId: outcome.callId, status: 'rejected' };
  return { outcome: 'admitted', callId: outcome.callId, status: outcome.status };
}

import { verify } from '../../src';
import { runRevocation } from '../../experiments/reproduce/runRevocation';

describe('revocation during execution (ordered by events, no sleeps)', () => {
  it('lets the admitted call complete and rejects the later call as revoked', async () => {
    const { record, log } = await runRevocation(false);
    expect(record.order).toEqual(['call.admitted', 'grant.revoked', 'call.completed', 'call.rejected']);
    expect([record.admittedStatus, record.laterOutcome, record.laterReason, record.abortObserved]).toEqual(['completed', 'rejected', 'revoked', false]);
    expect(record.effectCallIds).toEqual([record.admittedCallId]);
    expect(verify(log).ok).toBe(true);
  });

  it('with abortInFlight, the blocked tool observes its abort signal, fails without effect, and the later call is rejected', async () => {
    const { record, log } = await runRevocation(true);
    expect(record.order).toEqual(['call.admitted', 'grant.revoked', 'call.failed', 'call.rejected']);
    expect([record.admittedStatus, record.laterOutcome, record.laterReason, record.abortObserved]).toEqual(['failed', 'rejected', 'revoked', true]);
    expect(record.effectCallIds).toEqual([]);
    expect(record.store.digestAfter).toBe(record.store.digestBefore);
    expect(verify(log).ok).toBe(true);
  });
});

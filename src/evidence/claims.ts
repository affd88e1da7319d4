import type { Summary } from './types';

/** The published results the experiment must reproduce; `atc verify` holds every evidence file to them. */
export const claims: Summary = {
  sequential: { allowed: { total: 5, admitted: 5 }, adversarial: { total: 26, rejected: 26 }, rejectedThatModifiedStore: 0 },
  // The seed's published table (docs/evidence.md): 3/3 admitted, 22/22 rejected, 0/22 modified the store.
  sequentialSeed: { allowed: { total: 3, admitted: 3 }, adversarial: { total: 22, rejected: 22 }, rejectedThatModifiedStore: 0 },
  concurrencyCalls: { attempts: 64, admitted: 7, rejected: 57 },
  concurrencyBytes: { attempts: 64, admitted: 7, rejected: 57 },
  revocation: { admittedCallCompleted: true, laterCallRejected: true },
  revocationAbort: { abortObserved: true, admittedCallFailed: true, laterCallRejected: true },
};

/** The order the revocation runs must show in their logs. */
export const revocationOrder = {
  complete: ['call.admitted', 'grant.revoked', 'call.completed', 'call.rejected'],
  abort: ['call.admitted', 'grant.revoked', 'call.failed', 'call.rejected'],
} as const;

/** How each concurrency run must be set up for its 7/57 to mean what the table says. */
export const raceSetup = { workers: 8, attemptsPerWorker: 8, admitted: 7 } as const;

import type { LedgerEvent } from '../domain/events';
import { LogIndex } from './logIndex';
import { isSeedCase } from './sequentialCases';
import type { CaseRecord, ConcurrencyRecord, CountPair, LogName, RevocationRecord, SequentialCounts, Summary } from './types';

/** The parts of an evidence file the summary is computed from. */
export interface SummaryInputs {
  readonly cases: readonly CaseRecord[];
  readonly concurrency: { readonly calls: ConcurrencyRecord; readonly bytes: ConcurrencyRecord };
  readonly revocation: { readonly complete: RevocationRecord; readonly abort: RevocationRecord };
  readonly logs: { readonly [name in LogName]: readonly LedgerEvent[] };
}

function race(log: LogIndex, record: ConcurrencyRecord): CountPair {
  const decisions = log.decisionsFor(record.grantId);
  const admitted = decisions.filter((d) => d.type === 'call.admitted').length;
  return { attempts: decisions.length, admitted, rejected: decisions.length - admitted };
}

/** A then B then C… by seq, every one of them present. */
function inOrder(...events: (LedgerEvent | undefined)[]): boolean {
  for (let i = 0; i < events.length; i++) {
    const e = events[i];
    if (e === undefined) return false;
    if (i > 0 && (events[i - 1] as LedgerEvent).seq >= e.seq) return false;
  }
  return true;
}

function revocationSteps(log: LogIndex, record: RevocationRecord, settledAs: 'call.completed' | 'call.failed'): { settled: boolean; laterRejected: boolean } {
  const admitted = log.decisions.get(record.admittedCallId);
  const revoked = log.revocations.get(record.grantId);
  const settlement = log.settlements.get(record.admittedCallId);
  const later = log.decisions.get(record.laterCallId);
  const settled =
    admitted?.type === 'call.admitted' && admitted.grantId === record.grantId && revoked?.abortInFlight === record.abortInFlight && settlement?.type === settledAs && inOrder(admitted, revoked, settlement);
  const laterRejected = later?.type === 'call.rejected' && later.reason === 'revoked' && later.grantId === record.grantId && inOrder(revoked, settlement, later);
  return { settled, laterRejected };
}

function sequentialCounts(log: LogIndex, cases: readonly CaseRecord[]): SequentialCounts {
  const decisionOf = (c: CaseRecord) => log.decisions.get(c.observed.callId);
  const allowed = cases.filter((c) => c.kind === 'allowed');
  const adversarial = cases.filter((c) => c.kind === 'adversarial');
  const rejectedCases = adversarial.filter((c) => decisionOf(c)?.type === 'call.rejected');
  return {
    allowed: { total: allowed.length, admitted: allowed.filter((c) => decisionOf(c)?.type === 'call.admitted').length },
    adversarial: { total: adversarial.length, rejected: rejectedCases.length },
    rejectedThatModifiedStore: rejectedCases.filter((c) => c.storeDigestBefore !== c.storeDigestAfter || c.toolRuns !== 0).length,
  };
}

/**
 * Recomputes the published table from the logs: every count comes from the logged decisions, found
 * by the call ids the records name. Only the store digests and `abortObserved` come from the records
 * (the log never sees the store or the tool's signal).
 */
export function summarize(inputs: SummaryInputs): Summary {
  const sequential = new LogIndex(inputs.logs.sequential);
  const complete = revocationSteps(new LogIndex(inputs.logs.revocation), inputs.revocation.complete, 'call.completed');
  const abort = revocationSteps(new LogIndex(inputs.logs.revocationAbort), inputs.revocation.abort, 'call.failed');
  return {
    sequential: sequentialCounts(sequential, inputs.cases),
    sequentialSeed: sequentialCounts(sequential, inputs.cases.filter((c) => isSeedCase(c.name))),
    concurrencyCalls: race(new LogIndex(inputs.logs.concurrencyCalls), inputs.concurrency.calls),
    concurrencyBytes: race(new LogIndex(inputs.logs.concurrencyBytes), inputs.concurrency.bytes),
    revocation: { admittedCallCompleted: complete.settled, laterCallRejected: complete.laterRejected },
    revocationAbort: { abortObserved: inputs.revocation.abort.abortObserved, admittedCallFailed: abort.settled, laterCallRejected: abort.laterRejected },
  };
}

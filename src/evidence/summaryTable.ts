import type { CountPair, SequentialCounts, Summary } from './types';

const yes = (b: boolean): string => (b ? 'yes' : 'NO');
const race = (c: CountPair): string => `${c.attempts} attempts: ${c.admitted} admitted, ${c.rejected} rejected`;

/** The cases added since the seed: every case minus the seed's. */
function addedCounts(all: SequentialCounts, seed: SequentialCounts): SequentialCounts {
  return {
    allowed: { total: all.allowed.total - seed.allowed.total, admitted: all.allowed.admitted - seed.allowed.admitted },
    adversarial: { total: all.adversarial.total - seed.adversarial.total, rejected: all.adversarial.rejected - seed.adversarial.rejected },
    rejectedThatModifiedStore: all.rejectedThatModifiedStore - seed.rejectedThatModifiedStore,
  };
}

/** The rows of the published table, each as [check, observed text]. */
export function summaryRows(s: Summary): [string, string][] {
  const added = addedCounts(s.sequential, s.sequentialSeed);
  const n = s.sequentialSeed.allowed.total + s.sequentialSeed.adversarial.total;
  return [
    [`Seed's ${n} cases: allowed sequential controls`, `${s.sequentialSeed.allowed.admitted}/${s.sequentialSeed.allowed.total} admitted`],
    [`Seed's ${n} cases: adversarial or budget-exhausted`, `${s.sequentialSeed.adversarial.rejected}/${s.sequentialSeed.adversarial.total} rejected`],
    [`Seed's ${n} cases: rejected calls that modified the store`, `${s.sequentialSeed.rejectedThatModifiedStore}/${s.sequentialSeed.adversarial.rejected}`],
    ['Added since: allowed controls', `${added.allowed.admitted}/${added.allowed.total} admitted`],
    ['Added since: adversarial or budget-exhausted', `${added.adversarial.rejected}/${added.adversarial.total} rejected`],
    ['Added since: rejected calls that modified the store', `${added.rejectedThatModifiedStore}/${added.adversarial.rejected}`],
    ['Concurrency, call budget of 7 (8 threads)', race(s.concurrencyCalls)],
    ['Concurrency, byte budget for 7 (8 threads)', race(s.concurrencyBytes)],
    ['Revocation: admitted call completed', yes(s.revocation.admittedCallCompleted)],
    ['Revocation: later call rejected', yes(s.revocation.laterCallRejected)],
    ['Revocation with abortInFlight: abort observed', yes(s.revocationAbort.abortObserved)],
    ['Revocation with abortInFlight: admitted call failed', yes(s.revocationAbort.admittedCallFailed)],
    ['Revocation with abortInFlight: later call rejected', yes(s.revocationAbort.laterCallRejected)],
  ];
}

/** A plain-text table of the summary, next to the claims when given. */
export function formatSummary(summary: Summary, claims?: Summary, observedLabel = 'Observed'): string {
  const observed = summaryRows(summary);
  const claimed = claims === undefined ? undefined : summaryRows(claims);
  const header = claimed === undefined ? ['Check', observedLabel] : ['Check', observedLabel, 'Claim'];
  const rows = observed.map(([check, text], i) => (claimed === undefined ? [check, text] : [check, text, (claimed[i] as [string, string])[1]]));
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] as string).length)));
  const line = (cells: readonly string[]): string => `| ${cells.map((cell, c) => cell.padEnd(widths[c] as number)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

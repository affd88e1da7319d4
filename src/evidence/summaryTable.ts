import type { CountPair, Summary } from './types';

const yes = (b: boolean): string => (b ? 'yes' : 'NO');
const race = (c: CountPair): string => `${c.attempts} attempts: ${c.admitted} admitted, ${c.rejected} rejected`;

/** The rows of the published table, each as [check, observed text]. */
export function summaryRows(s: Summary): [string, string][] {
  return [
    ['Allowed sequential controls', `${s.sequential.allowed.admitted}/${s.sequential.allowed.total} admitted`],
    ['Adversarial or budget-exhausted cases', `${s.sequential.adversarial.rejected}/${s.sequential.adversarial.total} rejected`],
    ['Rejected calls that modified the store', `${s.sequential.rejectedThatModifiedStore}/${s.sequential.adversarial.rejected}`],
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

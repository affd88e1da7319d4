import type { SuiteName } from './data';
import type { AgentdojoResults } from './experiment';
import { policyNames } from './policies';
import type { PolicySummary, ReasonCounts } from './summarize';

function pct(part: number, whole: number): string {
  return whole === 0 ? '-' : `${((100 * part) / whole).toFixed(1)}%`;
}

function reasons(counts: ReasonCounts): string {
  const entries = Object.entries(counts);
  return entries.length === 0 ? '-' : entries.map(([r, n]) => `${r} ${n}`).join(', ');
}

function row(cells: readonly string[]): string {
  return `| ${cells.join(' | ')} |`;
}

const header = ['suite', 'policy', 'benign calls admitted', 'tasks fully admitted', 'injection pairs blocked', 'injection calls admitted', 'blocking reasons (first rejection per pair)', 'benign rejections'];

function cells(suite: string, policy: string, s: PolicySummary): string[] {
  const b = s.benign;
  const x = s.security;
  return [
    suite,
    policy,
    `${b.callsAdmitted}/${b.calls} (${pct(b.callsAdmitted, b.calls)})`,
    `${b.tasksFullyAdmitted}/${b.tasks} (${pct(b.tasksFullyAdmitted, b.tasks)})`,
    `${x.pairsBlocked}/${x.pairs} (${pct(x.pairsBlocked, x.pairs)})`,
    `${x.callsAdmitted}/${x.calls}`,
    reasons(x.blockingReasons),
    reasons(b.rejectReasons),
  ];
}

/** The results as a Markdown table: one row per suite and policy, then the totals. */
export function formatAgentdojoTable(results: AgentdojoResults): string {
  const lines = [row(header), row(header.map(() => '---'))];
  for (const [suite, r] of Object.entries(results.suites) as [SuiteName, NonNullable<AgentdojoResults['suites'][SuiteName]>][]) {
    for (const policy of policyNames) lines.push(row(cells(suite, policy, r.policies[policy])));
  }
  for (const policy of policyNames) lines.push(row(cells('**all**', policy, results.totals[policy])));
  const notMeasurable = results.totals.A.security.injectionTasksNotMeasurable;
  lines.push('', `Injection tasks without ground-truth calls (not measurable): ${notMeasurable} of ${results.totals.A.security.injectionTasks}.`);
  return lines.join('\n');
}

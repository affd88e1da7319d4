import { createHash } from 'node:crypto';
import { canonicalJson, verify, type LedgerEvent, type VerifyResult } from '../../src';
import { packageRoot, revisionOf } from '../reproduce/environment';
import { loadDataset, suiteNames, type Dataset, type SuiteName } from './data';
import { budgetRule, clockStartMs, grantLifetimeMs, policyDescriptions, policyNames, type PolicyName } from './policies';
import { runSuite, type GrantRun, type RegistrationProblem, type SuiteRun } from './runSuite';
import { schemaFindings, type SchemaFinding } from './schemaFindings';
import { addSummaries, decisionsOf, emptySummary, labelPairs, summarize, type PolicySummary } from './summarize';

/** Bumped whenever a field of results/agentdojo.json changes meaning. */
export const agentdojoSchemaVersion = 1;

/** Logs are embedded in the results file when their JSON is at most this large; else only hashes. */
export const embedLogsBytesMax = 5_000_000;

export type LogKey = `${SuiteName}/${PolicyName}`;

export interface LogRecord {
  readonly events: number;
  /** The last event's hash: it commits to the whole chain. */
  readonly headHash: string;
  /** SHA-256 of the log as JSON Lines of canonical JSON (one event a line, each ending in \n). */
  readonly sha256: string;
  readonly verify: VerifyResult;
  /** Every decision the log records equals what `invoke` returned for that call. */
  readonly decisionsMatchInvoke: boolean;
  /** The tools ran for exactly the admitted calls, never for a rejected one. */
  readonly toolRunsMatchAdmissions: boolean;
}

export interface SuiteResult {
  readonly tools: number;
  readonly registered: number;
  readonly registrationProblems: readonly RegistrationProblem[];
  readonly userTasks: number;
  readonly injectionTasks: number;
  readonly injectionTasksWithoutCalls: readonly string[];
  readonly policies: Readonly<Record<PolicyName, PolicySummary>>;
}

export interface AgentdojoResults {
  readonly schemaVersion: number;
  readonly experiment: 'agentdojo';
  readonly createdAt: string;
  readonly revision: { readonly commit: string | null; readonly dirty: boolean | null };
  readonly data: { readonly agentdojoVersion: string; readonly benchmarkVersion: string; readonly fileHashes: Readonly<Record<string, string>> };
  readonly method: {
    readonly policies: Readonly<Record<PolicyName, string>>;
    readonly budget: { readonly calls: string; readonly inputBytes: number };
    readonly clock: { readonly fixedAtMs: number; readonly grantLifetimeMs: number };
    readonly arguments: string;
    readonly pairs: string;
  };
  readonly suites: Readonly<Partial<Record<SuiteName, SuiteResult>>>;
  readonly totals: Readonly<Record<PolicyName, PolicySummary>>;
  readonly schemaFindings: readonly SchemaFinding[];
  readonly logs: Readonly<Partial<Record<LogKey, LogRecord>>>;
  /** Which grant ran which task, with the call ids: with the logs, enough to recompute every number. */
  readonly index: Readonly<Partial<Record<LogKey, readonly GrantRun[]>>>;
  /** The full logs, when small enough (see embedLogsBytesMax); otherwise absent and `logs` holds hashes. */
  readonly events?: Readonly<Partial<Record<LogKey, readonly LedgerEvent[]>>>;
  readonly durationMs: number;
}

export interface ExperimentOptions {
  readonly suites?: readonly SuiteName[];
  readonly dataDir?: string;
  readonly dataset?: Dataset;
  readonly onProgress?: (line: string) => void;
}

/** What the experiment keeps in memory besides the results: the raw runs, for tests. */
export interface ExperimentRun {
  readonly results: AgentdojoResults;
  readonly runs: readonly SuiteRun[];
}

function jsonLinesSha256(log: readonly LedgerEvent[]): string {
  const hash = createHash('sha256');
  for (const event of log) hash.update(`${canonicalJson(event)}\n`);
  return hash.digest('hex');
}

function logRecord(run: SuiteRun): LogRecord {
  const decisions = decisionsOf(run.log);
  const admitted = [...decisions].filter(([, d]) => d.admitted).map(([id]) => id).sort();
  const decisionsMatchInvoke =
    decisions.size === Object.keys(run.observed).length &&
    Object.entries(run.observed).every(([callId, o]) => {
      const d = decisions.get(callId);
      return d !== undefined && (d.admitted ? o.outcome === 'admitted' : o.outcome === 'rejected' && o.reason === d.reason);
    });
  const ran = [...run.toolRuns].sort();
  return {
    events: run.log.length,
    headHash: run.log.at(-1)?.hash ?? '',
    sha256: jsonLinesSha256(run.log),
    verify: verify(run.log),
    decisionsMatchInvoke,
    toolRunsMatchAdmissions: ran.length === admitted.length && ran.every((id, i) => id === admitted[i]),
  };
}

/** Runs the chosen suites (default all four) under both policies and assembles the results file. */
export async function runAgentdojo(options: ExperimentOptions = {}): Promise<ExperimentRun> {
  const started = performance.now();
  const dataset = options.dataset ?? loadDataset(options.dataDir);
  const chosen = options.suites ?? suiteNames;
  const suites: Partial<Record<SuiteName, SuiteResult>> = {};
  const logs: Partial<Record<LogKey, LogRecord>> = {};
  const index: Partial<Record<LogKey, readonly GrantRun[]>> = {};
  const events: Partial<Record<LogKey, readonly LedgerEvent[]>> = {};
  const findings: SchemaFinding[] = [];
  const runs: SuiteRun[] = [];
  let totals = Object.fromEntries(policyNames.map((p) => [p, emptySummary])) as Record<PolicyName, PolicySummary>;
  let eventBytes = 0;
  for (const suite of dataset.suites.filter((s) => chosen.includes(s.name))) {
    const policies = {} as Record<PolicyName, PolicySummary>;
    let last: SuiteRun | undefined;
    for (const policy of policyNames) {
      const run = await runSuite(suite, policy);
      const key: LogKey = `${suite.name}/${policy}`;
      policies[policy] = summarize(run.log, run.grants, suite.injectionTasks.length, run.injectionTasksWithoutCalls.length);
      totals = { ...totals, [policy]: addSummaries(totals[policy], labelPairs(policies[policy], suite.name)) };
      logs[key] = logRecord(run);
      index[key] = run.grants;
      events[key] = run.log;
      eventBytes += JSON.stringify(run.log).length;
      findings.push(...schemaFindings(suite, run));
      runs.push(run);
      last = run;
      options.onProgress?.(`${key}: ${run.grants.length} grants, ${run.log.length} events`);
    }
    suites[suite.name] = {
      tools: suite.tools.length,
      registered: last?.registered.length ?? 0,
      registrationProblems: last?.registrationProblems ?? [],
      userTasks: suite.userTasks.length,
      injectionTasks: suite.injectionTasks.length,
      injectionTasksWithoutCalls: last?.injectionTasksWithoutCalls ?? [],
      policies,
    };
  }
  const results: AgentdojoResults = {
    schemaVersion: agentdojoSchemaVersion,
    experiment: 'agentdojo',
    createdAt: new Date().toISOString(),
    revision: revisionOf(packageRoot()),
    data: { agentdojoVersion: dataset.agentdojoVersion, benchmarkVersion: dataset.benchmarkVersion, fileHashes: dataset.fileHashes },
    method: {
      policies: policyDescriptions,
      budget: { calls: `${budgetRule.callsPerGroundTruthCall} x the user task's ground-truth call count`, inputBytes: budgetRule.inputBytes },
      clock: { fixedAtMs: clockStartMs, grantLifetimeMs },
      arguments: 'each call replays its concrete `args`; `placeholder_args` only where `args` is null (never, in this data)',
      pairs: "each (user task, injection task) pair runs the injection's calls alone on a fresh grant with the user task's scope and full budget",
    },
    suites,
    totals,
    schemaFindings: findings,
    logs,
    index,
    ...(eventBytes <= embedLogsBytesMax ? { events } : {}),
    durationMs: Math.round(performance.now() - started),
  };
  return { results, runs };
}

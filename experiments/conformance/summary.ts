// Reads the conformance suite's output: its SUMMARY lines (per scenario, checks passed and failed)
// and, for failed checks, each scenario's checks.json.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export interface ScenarioResult {
  readonly scenario: string;
  readonly passed: number;
  readonly failed: number;
  /** The checks that did not succeed: id, status and the suite's own message. */
  readonly failures: readonly { readonly id: string; readonly status: string; readonly message?: string }[];
}

export interface SuiteSummary {
  readonly scenarios: number;
  readonly scenariosPassed: number;
  readonly checksPassed: number;
  readonly checksFailed: number;
  readonly perScenario: readonly ScenarioResult[];
}

/** `✓ name: 3 passed, 0 failed` / `✗ name: 1 passed, 2 failed` lines after `=== SUMMARY ===`. */
export function parseSummaryLines(stdout: string): { scenario: string; passed: number; failed: number }[] {
  const at = stdout.lastIndexOf('=== SUMMARY ===');
  if (at < 0) return [];
  const rows: { scenario: string; passed: number; failed: number }[] = [];
  for (const line of stdout.slice(at).split('\n')) {
    const m = /^\s*\S+\s+([A-Za-z0-9_.-]+): (\d+) passed, (\d+) failed/.exec(line);
    if (m !== null) rows.push({ scenario: m[1] as string, passed: Number(m[2]), failed: Number(m[3]) });
  }
  return rows;
}

interface Check {
  readonly id?: unknown;
  readonly status?: unknown;
  readonly errorMessage?: unknown;
}

/** The checks of `scenario` that did not succeed, from `<outDir>/server-<scenario>-<time>/checks.json`. */
export function failedChecks(outDir: string, scenario: string): ScenarioResult['failures'] {
  if (!existsSync(outDir)) return [];
  const dirs = readdirSync(outDir).filter((d) => d.startsWith(`server-${scenario}-`) && /^\d{4}-\d\d-\d\dT/.test(d.slice(`server-${scenario}-`.length)));
  const failures: { id: string; status: string; message?: string }[] = [];
  for (const dir of dirs) {
    const file = path.join(outDir, dir, 'checks.json');
    if (!existsSync(file)) continue;
    const checks = JSON.parse(readFileSync(file, 'utf8')) as Check[];
    for (const check of checks) {
      if (check.status === 'SUCCESS') continue;
      failures.push({ id: String(check.id), status: String(check.status), ...(typeof check.errorMessage === 'string' ? { message: check.errorMessage.slice(0, 500) } : {}) });
    }
  }
  return failures;
}

export function summarize(stdout: string, outDir: string): SuiteSummary {
  const perScenario = parseSummaryLines(stdout).map((row) => ({ ...row, failures: row.failed > 0 ? failedChecks(outDir, row.scenario) : [] }));
  return {
    scenarios: perScenario.length,
    scenariosPassed: perScenario.filter((s) => s.failed === 0).length,
    checksPassed: perScenario.reduce((n, s) => n + s.passed, 0),
    checksFailed: perScenario.reduce((n, s) => n + s.failed, 0),
    perScenario,
  };
}

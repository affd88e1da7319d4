import type { ScenarioResult } from './scenarios/types';
import type { Figures } from './stats';

/** The part of results/bench.json (written by main.ts) the report reads. */
export interface BenchReport {
  readonly createdAt: string;
  readonly mode: string;
  readonly revision: { readonly commit: string | null; readonly dirty: boolean | null };
  readonly machine: { readonly cpuModel: string; readonly cpuCount: number; readonly memoryGiB: number; readonly node: string; readonly os: string; readonly loadAverageAtStart?: readonly number[] };
  readonly durationSec: number;
  readonly scenarios: readonly ScenarioResult[];
}

/** How a generated report begins, so a run never overwrites a report written by hand. */
export const generatedMarker = '<!-- Written by `npm run bench`';

const num = (n: number): string => n.toLocaleString('en-US');
const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function figureRows(figures: Readonly<Record<string, Figures>>): string[] {
  const rows = Object.entries(figures).map(([name, f]) => `| ${cell(name)} | ${num(f.opsPerSec)} | ${f.medianUs} | ${f.p99Us} | ${f.maxUs} |`);
  return rows.length === 0 ? [] : ['| contender | ops/s | median µs | p99 µs | max µs |', '| --- | ---: | ---: | ---: | ---: |', ...rows, ''];
}

function derivedRows(derived: ScenarioResult['derived']): string[] {
  const rows = Object.entries(derived).map(([k, v]) => `| ${cell(k)} | ${cell(typeof v === 'number' ? num(v) : String(v))} |`);
  return rows.length === 0 ? [] : ['| derived | value |', '| --- | --- |', ...rows, ''];
}

function targetLine(r: ScenarioResult): string {
  if (r.target !== undefined) return `**Target**: ${cell(r.target.description)}: ${r.target.value} (limit ${r.target.limit}): **${r.target.pass ? 'met' : 'missed'}**.`;
  return r.noTarget !== undefined ? `**Target**: not checked in this run: ${r.noTarget}` : '**Target**: none (reported only).';
}

function scenarioSection(r: ScenarioResult): string[] {
  const lines = [`## ${r.id}. ${r.title}`, ''];
  if (r.skipped !== undefined) return [...lines, `Skipped: ${r.skipped.split('\n')[0] ?? ''}`, ''];
  lines.push(...figureRows(r.figures), ...derivedRows(r.derived), targetLine(r), '');
  for (const note of r.notes ?? []) lines.push(`- ${note}`);
  if ((r.notes ?? []).length > 0) lines.push('');
  return lines;
}

/**
 * The report a bench run writes beside its JSON (results/bench.md beside results/bench.json): when
 * and where it ran, then per scenario its contenders, derived figures, target and notes. Made from
 * the JSON alone, so test/lab/bench.report.test.ts can check the committed pair agree.
 */
export function benchMarkdown(report: BenchReport, jsonName: string): string {
  const m = report.machine;
  const load = m.loadAverageAtStart === undefined ? '' : `, load average at start ${m.loadAverageAtStart.join(' / ')}`;
  const targets = report.scenarios.filter((r) => r.target !== undefined);
  const missed = targets.filter((r) => r.target?.pass === false).map((r) => r.id);
  const lines = [
    '# Benchmark run',
    '',
    `${generatedMarker} from ${jsonName}; rerun the bench, do not edit this page. -->`,
    '',
    `A ${report.mode} run of \`npm run bench\` (method: docs/performance.md) at commit ${report.revision.commit ?? 'unknown'}${report.revision.dirty === true ? ' (dirty tree)' : report.revision.dirty === false ? ' (clean tree)' : ''},`,
    `${report.createdAt}, ${report.durationSec} s, on ${m.cpuModel} ×${m.cpuCount}, ${m.memoryGiB} GiB, Node ${m.node}, ${m.os}${load}.`,
    `Ratios compare contenders within this run only. Targets: ${targets.length - missed.length} of ${targets.length} met${missed.length === 0 ? '' : ` (missed: ${missed.join(', ')})`}.`,
    '',
  ];
  for (const r of report.scenarios) lines.push(...scenarioSection(r));
  return `${lines.join('\n').trimEnd()}\n`;
}

/** Where the report of a run written to `jsonPath` goes: the same name, `.md`. */
export function markdownPathOf(jsonPath: string): string {
  return jsonPath.replace(/\.json$/i, '') + '.md';
}

/** The report, unless a hand-written page (one without the marker) is at its place: then undefined. */
export function reportToWrite(existing: string | undefined, report: BenchReport, jsonName: string): string | undefined {
  return existing === undefined || existing.includes(generatedMarker) ? benchMarkdown(report, jsonName) : undefined;
}

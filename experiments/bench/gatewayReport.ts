// `node dist/experiments/bench/gatewayReport.js [results/bench-gateway.json]`: renders the gateway
// scenario's results (written by `node dist/experiments/bench/main.js --only 15 --output
// results/bench-gateway.json`) as results/bench-gateway.md, next to the JSON. Nothing is measured here.
import { readFileSync, writeFileSync } from 'node:fs';
import type { Figures } from './stats';
import type { ScenarioResult } from './scenarios/types';

interface Report {
  readonly createdAt: string;
  readonly mode: string;
  readonly revision: { readonly commit: string; readonly dirty: boolean };
  readonly machine: { readonly cpuModel: string; readonly cpuCount: number; readonly memoryGiB: number; readonly node: string; readonly loadAverageAtStart: readonly number[] };
  readonly scenarios: readonly ScenarioResult[];
}

function render(report: Report, source: string): string {
  const result = report.scenarios.find((s) => s.id === '15');
  if (result === undefined) throw new Error(`${source} holds no scenario 15`);
  if (result.skipped !== undefined) throw new Error(`scenario 15 was skipped: ${result.skipped}`);
  const d = result.derived;
  const m = report.machine;
  const rows = Object.entries(result.figures).map(([name, f]: [string, Figures]) => `| ${name} | ${f.ops} | ${f.opsPerSec} | ${f.medianUs} | ${f.p99Us} |`);
  const target = result.target;
  return [
    `# Bench scenario 15: atc gateway, 64 sessions (${report.createdAt.slice(0, 10)})`,
    '',
    `Generated from ${source} by experiments/bench/gatewayReport.ts. Run: \`node dist/experiments/bench/main.js --only 15 --output ${source}\` (${report.mode}) at ${report.revision.commit.slice(0, 7)}${report.revision.dirty ? ' (with uncommitted changes)' : ''}; ${m.cpuModel} ×${m.cpuCount}, ${m.memoryGiB} GiB, Node ${m.node}.`,
    '',
    `**Machine load:** load average ${String(d.loadAverageAtStart)} at the scenario's start and ${String(d.loadAverageAtEnd)} at its end, on ${m.cpuCount} CPUs shared with other engineers' builds and tests while it ran. Absolute latencies and rates are contended and vary between runs; the ratio compares the two sides within the same run, in alternating rounds.`,
    '',
    '| contender (its best round by calls/s) | calls | calls/s | median µs | p99 µs |',
    '|---|---|---|---|---|',
    ...rows,
    '',
    `- **Throughput at 64 sessions, gateway ÷ pass-through: ${String(d.throughputRatio64)}** (the upper median of the round pairs ${String(d.throughputRatiosPerRound)}); target ≥ ${target?.limit ?? 0.7}: ${target?.pass === true ? 'met' : 'not met'}.`,
    `- **Median latency added per call:** ${String(d.addedMedianMs64)} ms at 64 sessions (target ≤ 1 ms: ${d.addedMedianPass === true ? 'met' : 'not met'}); ${String(d.addedMedianMs1)} ms for one session calling alone.`,
    `- **Resident memory per idle session:** gateway ${String(d.idleSessionKiBGateway)} KiB, pass-through ${String(d.idleSessionKiBPlain)} KiB (RSS before and after opening 200 sessions that only initialized; one sample, GC-dependent).`,
    '',
    ...(result.notes ?? []).map((n) => `- ${n}`),
    '',
  ].join('\n');
}

const source = process.argv[2] ?? 'results/bench-gateway.json';
const report = JSON.parse(readFileSync(source, 'utf8')) as Report;
writeFileSync(source.replace(/\.json$/, '.md'), render(report, source));

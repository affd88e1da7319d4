import type { ScenarioResult } from './scenarios/types';

const pad = (s: string, n: number): string => (s.length >= n ? s : s + ' '.repeat(n - s.length));
const num = (n: number): string => n.toLocaleString('en-US');

/** Prints every scenario's contenders (ops/s, median, p99) and its target line. */
export function printTable(results: readonly ScenarioResult[]): void {
  const lines: string[] = [];
  for (const r of results) {
    lines.push('', `[${r.id}] ${r.title}`);
    if (r.skipped) {
      lines.push(`    skipped: ${r.skipped.split('\n')[0]}`);
      continue;
    }
    for (const [name, f] of Object.entries(r.figures)) {
      lines.push(`    ${pad(name, 34)} ${pad(num(f.opsPerSec) + ' ops/s', 16)} median ${pad(f.medianUs + ' µs', 12)} p99 ${f.p99Us} µs`);
    }
    for (const [k, v] of Object.entries(r.derived)) lines.push(`    ${pad(k, 34)} ${typeof v === 'number' ? num(v) : String(v)}`);
    if (r.target) lines.push(`    target: ${r.target.description}: ${r.target.value} (limit ${r.target.limit}) ${r.target.pass ? 'PASS' : 'MISS'}`);
    else if (r.noTarget) lines.push(`    target: not checked in this run: ${r.noTarget}`);
  }
  process.stdout.write(lines.join('\n') + '\n');
}

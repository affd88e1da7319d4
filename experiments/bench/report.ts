import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { benchMarkdown, markdownPathOf, type BenchReport } from './markdown';

/**
 * `node dist/experiments/bench/report.js results/bench.json`: writes the report of a recorded run
 * again (results/bench.md), without running the bench. `npm run bench` writes it after each run.
 */
function main(args: readonly string[]): number {
  const [json] = args;
  if (json === undefined || args.length !== 1) {
    process.stderr.write('usage: node dist/experiments/bench/report.js <results/bench.json>\n');
    return 2;
  }
  const report = JSON.parse(readFileSync(json, 'utf8')) as BenchReport;
  writeFileSync(markdownPathOf(json), benchMarkdown(report, path.basename(json)));
  process.stdout.write(`wrote ${markdownPathOf(json)}\n`);
  return 0;
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));

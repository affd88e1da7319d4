import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { benchMarkdown, generatedMarker, reportToWrite, type BenchReport } from '../../experiments/bench/markdown';

// A bench run writes its report beside its JSON (results/bench.md beside results/bench.json): the
// committed pairs must agree, so a figure quoted from the page is the figure the run recorded.
const results = path.join(__dirname, '..', '..', 'results');
const benchRuns = readdirSync(results).filter((f) => /^bench.*\.json$/.test(f) && 'scenarios' in (JSON.parse(readFileSync(path.join(results, f), 'utf8')) as object));
const pageOf = (json: string): string => readFileSync(path.join(results, json.replace(/\.json$/, '.md')), 'utf8');
// results/bench-otel.md was written by hand (its ablations are not in the JSON): the one exception.
const generatedRuns = benchRuns.filter((json) => json !== 'bench-otel.json');

describe('the bench reports in results/', () => {
  it('has results/bench.md for results/bench.json, and a hand-written page only for bench-otel.json', () => {
    expect(generatedRuns).toContain('bench.json');
    expect(pageOf('bench-otel.json')).not.toContain(generatedMarker);
  });

  it.each(generatedRuns)('%s: its report is the one its figures make', (json) => {
    const report = JSON.parse(readFileSync(path.join(results, json), 'utf8')) as BenchReport;
    expect(pageOf(json)).toBe(benchMarkdown(report, json));
  });

  it('never overwrites a report written by hand, and rewrites a generated one', () => {
    const report = JSON.parse(readFileSync(path.join(results, 'bench.json'), 'utf8')) as BenchReport;
    expect(reportToWrite('# Scenario 14, by hand\n', report, 'bench.json')).toBeUndefined();
    expect(reportToWrite(`${generatedMarker} from bench.json -->\nold`, report, 'bench.json')).toBe(benchMarkdown(report, 'bench.json'));
    expect(reportToWrite(undefined, report, 'bench.json')).toContain('Targets: 8 of 11 met (missed: 2, 9, 12).');
  });
});

import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { Survivor } from './condense';
import { checkExplanations, checkReport, explanationFileProblems, renderSurvivorsPage, type ExplanationFile } from './explanations';

/**
 * `node dist/experiments/mutation/explain.js [--check]`: matches every survivor of results/mutation.json
 * with experiments/mutation/explained/, writes results/mutation-survivors.md (with --check: only
 * compares it), and exits 1 when a survivor is unexplained, an entry is stale, or the page differs.
 */

/** The repository: the nearest directory up with a package.json (from dist/ when built, from the sources under ts-jest). */
function repositoryRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}
const root = repositoryRoot(__dirname);
export const explainedDir = path.join(root, 'experiments', 'mutation', 'explained');
export const survivorsPage = path.join(root, 'results', 'mutation-survivors.md');
const resultsFile = path.join(root, 'results', 'mutation.json');

function jsonFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? jsonFiles(full) : name.endsWith('.json') ? [full] : [];
  });
}

/** Reads the explanation files and the results, and checks them against each other. */
export function explainResults(): { page: string; report: string[] } {
  const results = JSON.parse(readFileSync(resultsFile, 'utf8')) as { files: readonly { file: string }[]; survivors: readonly Survivor[] };
  const report: string[] = [];
  const files: ExplanationFile[] = [];
  for (const full of jsonFiles(explainedDir).sort()) {
    const where = path.relative(root, full);
    const parsed: unknown = JSON.parse(readFileSync(full, 'utf8'));
    const problems = explanationFileProblems(parsed, where);
    if (problems.length > 0) report.push(...problems);
    else {
      const file = parsed as ExplanationFile;
      const expected = path.join('experiments', 'mutation', 'explained', file.file.replace(/^src\//, '').replace(/\.ts$/, '.json'));
      if (where !== expected) report.push(`${where}: explains ${file.file}, so it belongs at ${expected}`);
      files.push(file);
    }
  }
  const check = checkExplanations(results.survivors, files);
  report.push(...checkReport(check));
  return { page: renderSurvivorsPage(check, results.files.length), report };
}

function main(): number {
  const checkOnly = process.argv.includes('--check');
  const { page, report } = explainResults();
  if (checkOnly) {
    const current = existsSync(survivorsPage) ? readFileSync(survivorsPage, 'utf8') : '';
    if (current !== page) report.push(`${path.relative(root, survivorsPage)} is not the page the explanations make: run explain.js without --check`);
  } else writeFileSync(survivorsPage, page);
  for (const line of report) console.error(line);
  console.log(report.length === 0 ? 'every survivor is explained' : `${report.length} problems`);
  return report.length === 0 ? 0 : 1;
}

if (require.main === module) process.exitCode = main();

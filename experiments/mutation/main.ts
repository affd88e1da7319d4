import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { machine, revision } from '../bench/machine';
import { condense, isStrykerReport, total, type Counts, type FileResult, type Survivor } from './condense';

/**
 * `npm run mutation [-- options]`: runs Stryker (stryker.config.json) and condenses its JSON report.
 *
 *   (no options)            every file of src/domain, src/verification and src/tools; replaces results/mutation.json
 *   --files <f> [<f> …]     only these files; merges them into results/mutation.json (each file keeps its commit)
 *   --quick <file>          one file; writes build/mutation/quick.json, leaves results/ alone
 *   --min <percent>         exit 1 when the score of what was run is below this
 *   --concurrency <n>       Stryker's processes, one of them the type checker (default: stryker.config.json's)
 */

const root = path.resolve(__dirname, '..', '..', '..');
const resultsFile = path.join(root, 'results', 'mutation.json');
// Per process, so that two runs (say, two --files runs on different files) do not share a sandbox or a report.
const runDir = path.join(root, 'build', 'mutation');
const reportFile = path.join(runDir, `report-${process.pid}.json`);
const configFile = path.join(runDir, `stryker-${process.pid}.json`);
const coreGroups = { core: ['src/domain/', 'src/verification/'], tools: ['src/tools/'], all: ['src/'] } as const;

interface Run {
  readonly commit: string;
  readonly dirty: boolean;
  readonly startedAt: string;
  readonly durationSeconds: number;
  readonly concurrency: number;
  readonly loadAverageAtStart: readonly number[];
  readonly mutate: readonly string[];
}

interface Results {
  readonly description: string;
  readonly machine: Omit<ReturnType<typeof machine>, 'loadAverageAtStart'>;
  readonly runs: readonly Run[];
  readonly totals: { readonly 'src/domain + src/verification': Counts; readonly 'src/tools': Counts; readonly all: Counts };
  readonly files: readonly (FileResult & { readonly commit: string })[];
  readonly survivors: readonly Survivor[];
}

const description =
  'Stryker 9.6.1, jest runner, TypeScript checker, coverageAnalysis perTest, ignoreStatic. score = (killed + timeout) / (killed + timeout + survived + noCoverage); ' +
  'invalid (compile errors) and ignored (static) mutants are not counted. Test set: see docs/testing.md. Each file records the commit it was measured at.';

function parseArgs(argv: readonly string[]): { mode: 'full' | 'files' | 'quick'; files: string[]; min: number | undefined; concurrency: number } {
  let mode: 'full' | 'files' | 'quick' = 'full';
  const files: string[] = [];
  let min: number | undefined;
  let concurrency = (JSON.parse(readFileSync(path.join(root, 'stryker.config.json'), 'utf8')) as { concurrency: number }).concurrency;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--quick' || arg === '--files') mode = arg === '--quick' ? 'quick' : 'files';
    else if (arg === '--min') min = Number(argv[++i]);
    else if (arg === '--concurrency') concurrency = Number(argv[++i]);
    else if (arg.startsWith('--')) throw new Error(`unknown option ${arg}`);
    else files.push(arg);
  }
  if (mode !== 'full' && files.length === 0) throw new Error(`${mode === 'quick' ? '--quick' : '--files'} needs at least one file`);
  if (mode === 'quick' && files.length !== 1) throw new Error('--quick takes one file');
  if (mode === 'full' && files.length > 0) throw new Error('files need --files or --quick');
  if (min !== undefined && !(min >= 0 && min <= 100)) throw new Error('--min takes a percentage');
  if (!(Number.isInteger(concurrency) && concurrency >= 1)) throw new Error('--concurrency takes a positive integer');
  for (const f of files) if (!existsSync(path.join(root, f))) throw new Error(`no such file: ${f}`);
  return { mode, files, min, concurrency };
}

function runStryker(mutate: readonly string[], concurrency: number): void {
  const bin = path.join(root, 'node_modules', '.bin', 'stryker');
  const config = JSON.parse(readFileSync(path.join(root, 'stryker.config.json'), 'utf8')) as Record<string, unknown>;
  mkdirSync(runDir, { recursive: true });
  writeFileSync(configFile, JSON.stringify({ ...config, $schema: undefined, tempDirName: `.stryker-tmp/run-${process.pid}`, jsonReporter: { fileName: path.relative(root, reportFile) } }, null, 2));
  const args = ['run', path.relative(root, configFile), '--concurrency', String(concurrency), ...(mutate.length > 0 ? ['--mutate', mutate.join(',')] : [])];
  const result = spawnSync(bin, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`stryker exited with ${result.status ?? result.signal}`);
}

function readReport(): ReturnType<typeof condense> {
  const parsed: unknown = JSON.parse(readFileSync(reportFile, 'utf8'));
  if (!isStrykerReport(parsed)) throw new Error(`${reportFile} is not a Stryker JSON report`);
  return condense(parsed);
}

function build(runs: readonly Run[], files: Results['files'], survivors: readonly Survivor[]): Results {
  const { loadAverageAtStart: _load, ...host } = machine();
  return {
    description,
    machine: host,
    runs,
    totals: { 'src/domain + src/verification': total(files, coreGroups.core), 'src/tools': total(files, coreGroups.tools), all: total(files, coreGroups.all) },
    files,
    survivors,
  };
}

function printSummary(files: readonly FileResult[]): void {
  for (const f of files) console.log(`${String(f.score ?? '-').padStart(6)}%  ${f.file}  (${f.killed + f.timeout} killed, ${f.survived} survived, ${f.noCoverage} no coverage)`);
  const t = total(files, coreGroups.all);
  console.log(`${String(t.score ?? '-').padStart(6)}%  total`);
}

function main(): number {
  const { mode, files, min, concurrency } = parseArgs(process.argv.slice(2));
  const { commit, dirty } = revision();
  const startedAt = new Date();
  const loadAverageAtStart = machine().loadAverageAtStart;
  runStryker(files, concurrency);
  const condensed = readReport();
  const run: Run = { commit, dirty, startedAt: startedAt.toISOString(), durationSeconds: Math.round((Date.now() - startedAt.getTime()) / 1000), concurrency, loadAverageAtStart, mutate: files.length > 0 ? files : ['(stryker.config.json mutate)'] };
  const measured = condensed.files.map((f) => ({ ...f, commit }));
  if (mode === 'quick') {
    writeFileSync(path.join(runDir, 'quick.json'), `${JSON.stringify(build([run], measured, condensed.survivors), null, 2)}\n`);
  } else if (mode === 'files' && existsSync(resultsFile)) {
    const previous = JSON.parse(readFileSync(resultsFile, 'utf8')) as Results;
    const replaced = new Set(measured.map((f) => f.file));
    const mergedFiles = [...previous.files.filter((f) => !replaced.has(f.file)), ...measured].sort((a, b) => a.file.localeCompare(b.file));
    const mergedSurvivors = [...previous.survivors.filter((s) => !replaced.has(s.file)), ...condensed.survivors].sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line || a.column - b.column);
    writeFileSync(resultsFile, `${JSON.stringify(build([...previous.runs, run], mergedFiles, mergedSurvivors), null, 2)}\n`);
  } else {
    writeFileSync(resultsFile, `${JSON.stringify(build([run], measured, condensed.survivors), null, 2)}\n`);
  }
  printSummary(condensed.files);
  const score = total(condensed.files, coreGroups.all).score;
  if (min !== undefined && (score === null || score < min)) {
    console.error(`mutation score ${score ?? '-'}% is below --min ${min}%`);
    return 1;
  }
  return 0;
}

try {
  process.exitCode = main();
} catch (error) {
  console.error((error as Error).message);
  process.exitCode = 2;
}

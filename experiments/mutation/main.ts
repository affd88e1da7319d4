import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { machine, revision } from '../bench/machine';
import { condense, isStrykerReport, rescore, total, type Counts, type FileResult, type Survivor } from './condense';
import { isTestSets, runsFor, type TestRun, type TestSets } from './testSets';

/**
 * `npm run mutation [-- options]`: runs Stryker (stryker.config.json) and condenses its JSON report.
 *
 *   (no options)            every group of experiments/mutation/testSets.json, one Stryker run each; replaces results/mutation.json
 *   --files <f> [<f> …]     only these files, each with its group's tests; merges them into results/mutation.json (each file keeps its commit)
 *   --quick <file>          one file; writes build/mutation/quick.json, leaves results/ alone
 *   --merge <results.json>  no run: merges the files of another results file (say a quick run's) into results/mutation.json
 *   --group <name>          the files of one group of testSets.json (same as --files with its files)
 *   --tests <glob> [<glob> …]  one run with this jest testMatch instead of the groups' tests (recorded in the run)
 *   --output <results.json> with --files: merge into this file instead of results/mutation.json (a helper's own record, merged later with --merge)
 *   --min <percent>         exit 1 when the score of what was run is below this
 *   --concurrency <n>       Stryker's processes, one of them the type checker (default: stryker.config.json's)
 */

const root = path.resolve(__dirname, '..', '..', '..');
const resultsFile = path.join(root, 'results', 'mutation.json');
const testSetsFile = path.join(root, 'experiments', 'mutation', 'testSets.json');
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
  readonly loadAverageAtEnd?: readonly number[];
  /** The group of testSets.json whose tests ran (or '(--tests)'). */
  readonly group?: string;
  readonly mutate: readonly string[];
  /** jest testMatch of the run: which tests could kill a mutant. */
  readonly tests: readonly string[];
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

type Mode = 'full' | 'files' | 'quick' | 'merge';
interface Args { readonly mode: Mode; readonly files: string[]; readonly tests: string[] | undefined; readonly min: number | undefined; readonly concurrency: number; readonly output: string }

function parseArgs(argv: readonly string[]): Args {
  let mode: Mode = 'full';
  const files: string[] = [];
  let tests: string[] | undefined;
  let min: number | undefined;
  let concurrency = strykerConfig().concurrency as number;
  let output = resultsFile;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--quick') mode = 'quick';
    else if (arg === '--files') mode = 'files';
    else if (arg === '--merge') mode = 'merge';
    else if (arg === '--tests') tests = [];
    else if (arg === '--group') {
      mode = 'files';
      const name = argv[++i];
      const group = testSets().groups.find((g) => g.name === name);
      if (group === undefined) throw new Error(`no group ${name ?? '(none)'} in ${path.relative(root, testSetsFile)}`);
      files.push(...group.mutate);
    }
    else if (arg === '--min') min = Number(argv[++i]);
    else if (arg === '--concurrency') concurrency = Number(argv[++i]);
    else if (arg === '--output') {
      const file = argv[++i];
      if (file === undefined || file.startsWith('--')) throw new Error('--output needs a file');
      output = path.resolve(file);
    }
    else if (arg.startsWith('--')) throw new Error(`unknown option ${arg}`);
    else if (tests !== undefined) tests.push(arg);
    else files.push(arg);
  }
  if (mode !== 'full' && files.length === 0) throw new Error(`--${mode} needs at least one file`);
  if ((mode === 'quick' || mode === 'merge') && files.length !== 1) throw new Error(`--${mode} takes one file`);
  if (mode === 'full' && files.length > 0) throw new Error('files need --files or --quick');
  if (tests !== undefined && tests.length === 0) throw new Error('--tests needs at least one glob');
  if (output !== resultsFile && mode !== 'files') throw new Error('--output goes with --files');
  if (min !== undefined && !(min >= 0 && min <= 100)) throw new Error('--min takes a percentage');
  if (!(Number.isInteger(concurrency) && concurrency >= 1)) throw new Error('--concurrency takes a positive integer');
  for (const f of files) if (!existsSync(path.resolve(root, f))) throw new Error(`no such file: ${f}`);
  return { mode, files, tests, min, concurrency, output };
}

function strykerConfig(): Record<string, unknown> & { jest: { config: Record<string, unknown> } } {
  return JSON.parse(readFileSync(path.join(root, 'stryker.config.json'), 'utf8')) as Record<string, unknown> & { jest: { config: Record<string, unknown> } };
}

function testSets(): TestSets {
  const parsed: unknown = JSON.parse(readFileSync(testSetsFile, 'utf8'));
  if (!isTestSets(parsed)) throw new Error(`${testSetsFile} is not a test-set map`);
  return parsed;
}

function runStryker(mutate: readonly string[], concurrency: number, tests: readonly string[]): void {
  const bin = path.join(root, 'node_modules', '.bin', 'stryker');
  const config = strykerConfig();
  mkdirSync(runDir, { recursive: true });
  // testSets.json names files from the repository root; jest matches testMatch against absolute paths.
  const testMatch = tests.map((t) => (t.startsWith('**/') || t.startsWith('<rootDir>') ? t : `<rootDir>/${t}`));
  const jest = { ...config.jest, config: { ...config.jest.config, testMatch } };
  writeFileSync(configFile, JSON.stringify({ ...config, $schema: undefined, jest, tempDirName: `.stryker-tmp/run-${process.pid}`, jsonReporter: { fileName: path.relative(root, reportFile) } }, null, 2));
  const args = ['run', path.relative(root, configFile), '--concurrency', String(concurrency), ...(mutate.length > 0 ? ['--mutate', mutate.join(',')] : [])];
  // Where the dry run records which mutants each test file reaches (test/support/mutationSetup.ts,
  // mutationSequencer.cjs); a fresh file per run.
  const coverageFile = path.join(runDir, `coverage-${process.pid}.jsonl`);
  rmSync(coverageFile, { force: true });
  const result = spawnSync(bin, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ATC_MUTATION_COVERAGE_FILE: coverageFile } });
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
    files: files.map((f) => rescore(f)),
    survivors,
  };
}

function printSummary(files: readonly FileResult[]): void {
  for (const f of files) console.log(`${String(f.score ?? '-').padStart(6)}%  ${f.file}  (${f.killed + f.timeout} killed, ${f.survived} survived, ${f.noCoverage} no coverage)`);
  const t = total(files, coreGroups.all);
  console.log(`${String(t.score ?? '-').padStart(6)}%  total`);
}

/** `into` with `from`'s files (and their survivors) replacing its entries for the same files, and `from`'s runs added. */
function merge(into: Results, from: Pick<Results, 'runs' | 'files' | 'survivors'>): Results {
  const replaced = new Set(from.files.map((f) => f.file));
  const files = [...into.files.filter((f) => !replaced.has(f.file)), ...from.files].sort((a, b) => a.file.localeCompare(b.file));
  const survivors = [...into.survivors.filter((s) => !replaced.has(s.file)), ...from.survivors].sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line || a.column - b.column);
  const runs = [...into.runs, ...from.runs.filter((r) => !into.runs.some((known) => known.startedAt === r.startedAt && known.commit === r.commit))];
  // Only the runs some file's entry still comes from (its commit, its file mutated): a re-measured
  // file's older runs go, so `runs` says exactly how the results were made.
  return build(runs.filter((r) => files.some((f) => f.commit === r.commit && r.mutate.includes(f.file))), files, survivors);
}

const readResults = (file: string): Results => JSON.parse(readFileSync(file, 'utf8')) as Results;
const writeResults = (file: string, results: Results): void => writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);

function main(): number {
  const { mode, files, tests: testsOption, min, concurrency, output } = parseArgs(process.argv.slice(2));
  if (mode === 'merge') {
    const from = readResults(path.resolve(root, files[0] as string));
    writeResults(resultsFile, existsSync(resultsFile) ? merge(readResults(resultsFile), from) : build(from.runs, from.files, from.survivors));
    printSummary(from.files);
    return 0;
  }
  const plan: readonly TestRun[] = testsOption !== undefined ? [{ name: '(--tests)', mutate: files, tests: testsOption }] : runsFor(testSets(), mode === 'full' ? undefined : files);
  let results: Results | undefined = mode === 'files' && existsSync(output) ? readResults(output) : undefined;
  const measuredFiles: FileResult[] = [];
  for (const step of plan) {
    // Per group: each Stryker run copies the tree as it is when the run starts.
    // The results file is rewritten after every group: its own change does not make the tree dirty.
    const outputInTree = path.relative(root, output);
    const { commit, dirty } = revision(outputInTree.startsWith('..') ? [] : [outputInTree]);
    const startedAt = new Date();
    const loadAverageAtStart = machine().loadAverageAtStart;
    console.log(`mutation: group ${step.name}: ${step.mutate.length} files, ${step.tests.length} test files (load ${loadAverageAtStart.join(' ')})`);
    runStryker(step.mutate, concurrency, step.tests);
    const condensed = readReport();
    const run: Run = { commit, dirty, startedAt: startedAt.toISOString(), durationSeconds: Math.round((Date.now() - startedAt.getTime()) / 1000), concurrency, loadAverageAtStart, loadAverageAtEnd: machine().loadAverageAtStart, group: step.name, mutate: step.mutate.length > 0 ? step.mutate : ['(stryker.config.json mutate)'], tests: step.tests };
    const measured = build([run], condensed.files.map((f) => ({ ...f, commit })), condensed.survivors);
    results = results === undefined ? measured : merge(results, measured);
    // Written after every group, so that a long run that is stopped keeps what it finished.
    writeResults(mode === 'quick' ? path.join(runDir, 'quick.json') : output, results);
    measuredFiles.push(...condensed.files);
    printSummary(condensed.files);
  }
  const condensed = { files: measuredFiles };
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

// `npm run bench [-- --quick] [-- --only 1,3]`: every scenario of docs/performance.md in one run, one
// machine, each scenario in a fresh process; prints a table and writes results/bench.json. Plain
// Node, no test runner.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { machine, revision } from './machine';
import { markdownPathOf, reportToWrite } from './markdown';
import { verdictIo } from '../../src/cli/io';
import { parseOrExit, type CommandSpec } from '../../src/cli/options';
import { admission } from './scenarios/admission';
import { burst } from './scenarios/burst';
import { memory } from './scenarios/memory';
import { scale } from './scenarios/scale';
import { durable } from './scenarios/durable';
import { crossProcess } from './scenarios/crossProcess';
import { longLog } from './scenarios/longLog';
import { delegation } from './scenarios/delegation';
import { postgres } from './scenarios/postgres';
import { mcpProxy } from './scenarios/mcpProxy';
import { transparency } from './scenarios/transparency';
import { budgets } from './scenarios/budgets';
import { schemaWork } from './scenarios/schemaWork';
import { otel } from './scenarios/otel';
import { gateway } from './scenarios/gateway';
import type { BenchContext, ScenarioResult } from './scenarios/types';
import { printTable } from './table';

const scenarios: Record<string, (ctx: BenchContext) => Promise<ScenarioResult>> = {
  '1': admission,
  '2': scale,
  '3': burst,
  '4': durable,
  '5': crossProcess,
  '6': longLog,
  '7': memory,
  '8': delegation,
  '9': postgres,
  '10': mcpProxy,
  '11': transparency,
  '12': budgets,
  '13': schemaWork,
  '14': otel,
  '15': gateway,
};

/**
 * Runs one scenario in a fresh Node process and returns its result. Why: a scenario run after
 * others inherits their heap (scenario 1 leaves ledgers, peers and their garbage behind) and JIT
 * state, so the same scenario measured alone and within the full run differed (scenario 2's ratio
 * by 0.1-0.3); each scenario's ratios are still taken within its own process.
 */
function runIsolated(id: string, quick: boolean): ScenarioResult {
  const args = [__filename, '--scenario', id, ...(quick ? ['--quick'] : [])];
  const child = spawnSync(process.execPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 << 20 });
  const last = (child.stdout ?? '').trim().split('\n').pop() ?? '';
  if (child.status !== 0 || !last.startsWith('{')) {
    return { id, title: `scenario ${id}`, figures: {}, derived: {}, skipped: `failed: exit ${child.status ?? child.signal ?? 'unknown'}` };
  }
  return JSON.parse(last) as ScenarioResult;
}

/** `--scenario <id>`: the child side of runIsolated; prints the result as one JSON line. */
async function scenarioChild(id: string, quick: boolean): Promise<void> {
  const run = scenarios[id];
  if (run === undefined) throw new Error(`no scenario ${id}`);
  const ctx: BenchContext = { quick, log: (line) => process.stderr.write(line + '\n') };
  let result: ScenarioResult;
  try {
    result = await run(ctx);
  } catch (error) {
    result = { id, title: `scenario ${id}`, figures: {}, derived: {}, skipped: `failed: ${(error as Error).stack ?? String(error)}` };
  }
  process.stdout.write(JSON.stringify(result) + '\n');
}

const benchSpec: CommandSpec = {
  name: 'bench',
  runAs: 'npm run bench --',
  summary: 'run the benchmark scenarios (docs/performance.md), each in a fresh process',
  usage: ['[--quick] [--only 1,3] [--output results/bench.json]'],
  options: [
    { name: 'quick', description: 'reduced sizes (about 25 s); targets that need the full sizes are not checked' },
    { name: 'only', value: '<ids>', description: 'run only these scenarios, comma-separated' },
    { name: 'output', value: '<file.json>', description: 'where the run goes (default results/bench.json, with --quick results/bench.quick.json); its report beside it (.md)' },
    { name: 'scenario', value: '<id>', description: 'run one scenario in this process and print its result (what each run starts per scenario)' },
  ],
};

async function main(): Promise<void> {
  const parsed = await parseOrExit(benchSpec, process.argv.slice(2), verdictIo);
  if (typeof parsed === 'number') {
    process.exitCode = parsed;
    return;
  }
  const quick = parsed.flags.has('quick');
  const child = parsed.values.get('scenario');
  if (child !== undefined) return scenarioChild(child, quick);
  const only = parsed.values.get('only')?.split(',') ?? Object.keys(scenarios);
  const output = parsed.values.get('output') ?? path.join('results', quick ? 'bench.quick.json' : 'bench.json');
  const ctx: BenchContext = { quick, log: (line) => process.stderr.write(line + '\n') };
  const started = Date.now();
  const facts = machine();
  ctx.log(`bench${quick ? ' --quick' : ''}: ${facts.cpuModel} ×${facts.cpuCount}, ${facts.memoryGiB} GiB, Node ${facts.node}, ${facts.os}`);
  const results: ScenarioResult[] = [];
  for (const id of only) {
    if (scenarios[id] === undefined) throw new Error(`no scenario ${id}`);
    const t0 = Date.now();
    ctx.log(`scenario ${id}…`);
    results.push(runIsolated(id, quick));
    ctx.log(`scenario ${id} took ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }
  const report = {
    schemaVersion: 1,
    createdAt: new Date().toISOString(),
    mode: quick ? 'quick' : 'full',
    revision: revision(),
    machine: facts,
    durationSec: Math.round((Date.now() - started) / 100) / 10,
    targets: results.filter((r) => r.target).map((r) => ({ scenario: r.id, ...r.target })),
    scenarios: results,
  };
  mkdirSync(path.dirname(output), { recursive: true });
  writeFileSync(output, JSON.stringify(report, null, 2) + '\n');
  printTable(results);
  ctx.log(`wrote ${output} in ${report.durationSec} s`);
  const markdown = markdownPathOf(output);
  const page = reportToWrite(existsSync(markdown) ? readFileSync(markdown, 'utf8') : undefined, report, path.basename(output));
  if (page === undefined) ctx.log(`left ${markdown} alone: written by hand, not by the bench`);
  else {
    writeFileSync(markdown, page);
    ctx.log(`wrote ${markdown}`);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
});

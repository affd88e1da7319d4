import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runAgentdojo } from './experiment';
import { resultsJson } from './resultsJson';
import { formatAgentdojoTable } from './table';
import { verdictIo, type CliIo } from '../../src/cli/io';

const defaultOutput = 'results/agentdojo.json';
const usage = `usage: npm run agentdojo -- [--output <file>] [--data <dir>]

Replays AgentDojo's ground-truth calls (benign user tasks and prompt-injection attacks) through the
ledger under least-privilege grants (policy A: tools only; B: tools + host facts) and writes the
results (default ${defaultOutput}). --data: a directory holding tools.json, tasks.json and
environment_facts.json (default: the copy in experiments/agentdojo/data).`;

function parse(args: readonly string[]): { output: string; dataDir?: string } | 'help' | string {
  let output = defaultOutput;
  let dataDir: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--help' || arg === '-h') return 'help';
    if (arg === '--output' || arg === '-o' || arg === '--data') {
      const value = args[++i];
      if (value === undefined || value === '') return `${arg} needs a path`;
      if (arg === '--data') dataDir = value;
      else output = value;
    } else if (arg.startsWith('--output=')) output = arg.slice('--output='.length);
    else if (arg.startsWith('--data=')) dataDir = arg.slice('--data='.length);
    else return `unknown argument ${JSON.stringify(arg)}`;
  }
  return dataDir === undefined ? { output } : { output, dataDir };
}

/** `npm run agentdojo`: exit 0 when every ledger log verifies and matches what invoke returned, else 1; 2 on bad usage. */
export async function runAgentdojoCommand(args: readonly string[], io: CliIo = verdictIo): Promise<number> {
  const parsed = parse(args);
  if (parsed === 'help') {
    io.out(usage);
    return 0;
  }
  if (typeof parsed === 'string') {
    io.err(`agentdojo: ${parsed}\n${usage}`);
    return 2;
  }
  const { results } = await runAgentdojo({ ...(parsed.dataDir !== undefined ? { dataDir: parsed.dataDir } : {}), onProgress: (line) => io.out(line) });
  const file = path.resolve(parsed.output);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, resultsJson(results));
  io.out(`\n${formatAgentdojoTable(results)}\n`);
  for (const f of results.schemaFindings) {
    io.out(`schema finding: ${f.suite}/${f.policy} ${f.tool} (${f.userTask}${f.injectionTask === null ? '' : ` x ${f.injectionTask}`}, call ${f.callIndex}): rejected invalid_arguments, accepted by the AgentDojo schema${f.closedSchemaAccepts ? '' : '; the closed schema refuses it'}`);
  }
  const bad = Object.entries(results.logs).filter(([, l]) => l === undefined || !l.verify.ok || !l.decisionsMatchInvoke || !l.toolRunsMatchAdmissions);
  io.out(`wrote ${parsed.output} in ${results.durationMs} ms (${Object.keys(results.logs).length} ledger logs, ${bad.length === 0 ? 'all verify' : `${bad.length} do NOT verify`})`);
  if (bad.length > 0) {
    io.err(`agentdojo: logs failing verification or cross-checks: ${bad.map(([k]) => k).join(', ')}`);
    return 1;
  }
  return 0;
}

// Run as a script (`npm run agentdojo`), never from the product CLI: the package does not ship experiments/.
if (require.main === module) {
  runAgentdojoCommand(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`agentdojo: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}

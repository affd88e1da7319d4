import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runAgentdojo } from './experiment';
import { resultsJson } from './resultsJson';
import { formatAgentdojoTable } from './table';
import { verdictIo, type CliIo } from '../../src/cli/io';
import { parseOrExit, usageError, type CommandSpec } from '../../src/cli/options';

const defaultOutput = 'results/agentdojo.json';
export const agentdojoSpec: CommandSpec = {
  name: 'agentdojo',
  runAs: 'npm run agentdojo --',
  summary: "replay AgentDojo's ground-truth calls through the ledger and write the results",
  usage: ['[--output <file>] [--data <dir>]'],
  description: `Replays AgentDojo's ground-truth calls (benign user tasks and prompt-injection attacks) through the ledger under least-privilege grants (policy A: tools only; B: tools + host facts) and writes the results (default ${defaultOutput}).`,
  options: [
    { name: 'output', short: 'o', value: '<file>', description: `where to write the results (default ${defaultOutput})` },
    { name: 'data', value: '<dir>', description: 'a directory holding tools.json, tasks.json and environment_facts.json (default: the copy in experiments/agentdojo/data)' },
  ],
};

/** `npm run agentdojo`: exit 0 when every ledger log verifies and matches what invoke returned, else 1; 2 on bad usage. */
export async function runAgentdojoCommand(args: readonly string[], io: CliIo = verdictIo): Promise<number> {
  const parsed = await parseOrExit(agentdojoSpec, args, io);
  if (typeof parsed === 'number') return parsed;
  const output = parsed.values.get('output') ?? defaultOutput;
  const dataDir = parsed.values.get('data');
  if (output === '' || dataDir === '') return usageError(agentdojoSpec, io, 'an empty --output or --data');
  const { results } = await runAgentdojo({ ...(dataDir !== undefined ? { dataDir } : {}), onProgress: (line) => io.out(line) });
  const file = path.resolve(output);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, resultsJson(results));
  io.out(`\n${formatAgentdojoTable(results)}\n`);
  for (const f of results.schemaFindings) {
    io.out(`schema finding: ${f.suite}/${f.policy} ${f.tool} (${f.userTask}${f.injectionTask === null ? '' : ` x ${f.injectionTask}`}, call ${f.callIndex}): rejected invalid_arguments, accepted by the AgentDojo schema${f.closedSchemaAccepts ? '' : '; the closed schema refuses it'}`);
  }
  const bad = Object.entries(results.logs).filter(([, l]) => l === undefined || !l.verify.ok || !l.decisionsMatchInvoke || !l.toolRunsMatchAdmissions);
  io.out(`wrote ${output} in ${results.durationMs} ms (${Object.keys(results.logs).length} ledger logs, ${bad.length === 0 ? 'all verify' : `${bad.length} do NOT verify`})`);
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

import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { claims } from '../../src/evidence/claims';
import { formatSummary } from '../../src/evidence/summaryTable';
import { packageRoot, revisionOf } from './environment';
import { reproduce } from './reproduce';
import { verdictIo, type CliIo } from '../../src/cli/io';
import { parseOrExit, usageError, type CommandSpec } from '../../src/cli/options';

const defaultOutput = 'build/new-run.json';
export const reproduceSpec: CommandSpec = {
  name: 'reproduce',
  runAs: 'npm run reproduce --',
  summary: 'run the experiment and write the evidence file',
  usage: ['[--output <file>] [--require-clean]'],
  description: `Runs the experiment (31 sequential cases, two 64-attempt concurrency runs on 8 worker threads, two revocation runs) and writes the evidence file (default ${defaultOutput}); check it with \`atc verify\`.`,
  options: [
    { name: 'output', short: 'o', value: '<file>', description: `where to write the evidence file (default ${defaultOutput})` },
    { name: 'require-clean', description: 'refuse to run unless git reports a clean tree (for results/reference.json)' },
  ],
};

/** `npm run reproduce -- [--output F]`: exit 0 when the run reproduces every claim, 1 when it does not, 2 on bad usage. */
export async function runReproduce(args: readonly string[], io: CliIo = verdictIo): Promise<number> {
  const parsed = await parseOrExit(reproduceSpec, args, io);
  if (typeof parsed === 'number') return parsed;
  const output = parsed.values.get('output') ?? defaultOutput;
  if (output === '') return usageError(reproduceSpec, io, '--output needs a file path');
  if (parsed.flags.has('require-clean')) {
    const revision = revisionOf(packageRoot());
    if (revision.commit === null || revision.dirty !== false) {
      io.err(`reproduce: --require-clean: ${revision.commit === null ? 'no git revision found' : 'the tree has local changes (git status --porcelain is not empty)'}`);
      return 1;
    }
  }
  const evidence = await reproduce({ onProgress: (line) => io.out(line) });
  const file = path.resolve(output);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(evidence, null, 2)}\n`);
  io.out(`\n${formatSummary(evidence.summary, claims)}\n`);
  io.out(`wrote ${output} in ${evidence.durationMs} ms (revision ${evidence.revision.commit ?? 'unknown'}${evidence.revision.dirty === true ? ', dirty tree' : ''}); check it with: npm run verify -- ${output}`);
  if (!isDeepStrictEqual(evidence.summary, claims)) {
    io.err('reproduce: the run did NOT reproduce every claim (see the table)');
    return 1;
  }
  return 0;
}

// Run as a script (`npm run reproduce`), never from the product CLI: the package does not ship experiments/.
if (require.main === module) {
  runReproduce(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`reproduce: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}

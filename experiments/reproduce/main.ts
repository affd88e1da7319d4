import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { claims } from '../../src/evidence/claims';
import { formatSummary } from '../../src/evidence/summaryTable';
import { packageRoot, revisionOf } from './environment';
import { reproduce } from './reproduce';
import { verdictIo, type CliIo } from '../../src/cli/io';

const defaultOutput = 'build/new-run.json';
const usage = `usage: npm run reproduce -- [--output <file>] [--require-clean]

Runs the experiment (31 sequential cases, two 64-attempt concurrency runs on 8 worker threads,
two revocation runs) and writes the evidence file (default ${defaultOutput}).
  --require-clean  refuse to run unless git reports a clean tree (for results/reference.json)`;

interface ReproduceArgs {
  readonly output: string;
  readonly requireClean: boolean;
}

function parse(args: readonly string[]): ReproduceArgs | 'help' | string {
  let output = defaultOutput;
  let requireClean = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--help' || arg === '-h') return 'help';
    if (arg === '--require-clean') requireClean = true;
    else if (arg === '--output' || arg === '-o') {
      const value = args[++i];
      if (value === undefined || value === '') return `${arg} needs a file path`;
      output = value;
    } else if (arg.startsWith('--output=')) output = arg.slice('--output='.length);
    else return `unknown argument ${JSON.stringify(arg)}`;
  }
  return { output, requireClean };
}

/** `npm run reproduce -- [--output F]`: exit 0 when the run reproduces every claim, 1 when it does not, 2 on bad usage. */
export async function runReproduce(args: readonly string[], io: CliIo = verdictIo): Promise<number> {
  const parsed = parse(args);
  if (parsed === 'help') {
    io.out(usage);
    return 0;
  }
  if (typeof parsed === 'string') {
    io.err(`reproduce: ${parsed}\n${usage}`);
    return 2;
  }
  if (parsed.requireClean) {
    const revision = revisionOf(packageRoot());
    if (revision.commit === null || revision.dirty !== false) {
      io.err(`reproduce: --require-clean: ${revision.commit === null ? 'no git revision found' : 'the tree has local changes (git status --porcelain is not empty)'}`);
      return 1;
    }
  }
  const evidence = await reproduce({ onProgress: (line) => io.out(line) });
  const file = path.resolve(parsed.output);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(evidence, null, 2)}\n`);
  io.out(`\n${formatSummary(evidence.summary, claims)}\n`);
  io.out(`wrote ${parsed.output} in ${evidence.durationMs} ms (revision ${evidence.revision.commit ?? 'unknown'}${evidence.revision.dirty === true ? ', dirty tree' : ''}); check it with: npm run verify -- ${parsed.output}`);
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

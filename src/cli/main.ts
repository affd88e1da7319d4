#!/usr/bin/env node
import { commands } from './commands';

/** `atc <command> [args…]`: dispatches to one module per command (src/cli/commands/<name>.ts). */
async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  const command = name === undefined ? undefined : commands[name];
  if (command === undefined) {
    const list = Object.entries(commands).map(([n, c]) => `  atc ${n.padEnd(10)} ${c.summary}`).join('\n');
    process.stderr.write(`usage: atc <command> [options]\n\ncommands:\n${list}\n`);
    return name === undefined || name === '--help' || name === '-h' ? 0 : 2;
  }
  return command.run(rest);
}

// `atc verify … | head` closes the pipe early: that is the reader's choice, not an error. Later
// writes are dropped and the command still exits with its own code.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') return;
    process.exitCode = 1;
  });
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`atc: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);

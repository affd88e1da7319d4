#!/usr/bin/env node
import { commands } from './commands';
import { packageVersion } from './packageVersion';
import { nearest } from './nearest';

function mainHelp(): string {
  const list = Object.entries(commands).map(([n, c]) => `  ${n.padEnd(13)} ${c.summary}`).join('\n');
  return `usage: atc <command> [options]      (also installed as agent-tool-capabilities)

commands:
${list}

options:
  -h, --help       print this help; 'atc <command> --help' describes a command's options
  -v, --version    print the package version`;
}

/** `atc <command> [args…]`: dispatches to one module per command (src/cli/commands/<name>.ts). */
async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' ? rest[0] : undefined;
    if (topic !== undefined && commands[topic] !== undefined) return (commands[topic] as { run(a: readonly string[]): Promise<number> }).run(['--help']);
    process.stdout.write(`${mainHelp()}\n`);
    return 0;
  }
  if (name === '--version' || name === '-v' || name === '-V') {
    process.stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  const command = commands[name];
  if (command === undefined) {
    // The name is echoed only when it is short and printable: argv may hold anything.
    const shown = /^[\w.:-]{1,40}$/.test(name) ? name : '(not shown)';
    const guess = nearest(name, Object.keys(commands));
    process.stderr.write(`atc: unknown ${name.startsWith('-') ? 'option' : 'command'} ${shown}${guess !== undefined ? ` (did you mean ${guess}?)` : ''}\nrun 'atc --help' for the list of commands\n`);
    return 2;
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

import { once } from 'node:events';

/**
 * Where every `atc` command writes: stdout a line at a time (`out` may return a promise, to wait for
 * a full pipe to drain), stderr a line at a time. The exit code is what the command's run resolves
 * to (0 done, 1 a failed check, 2 bad usage or unreadable input); src/cli/main.ts sets it. Tests
 * pass their own `CliIo` to read what a run printed.
 */
export interface CliIo {
  out(line: string): void | Promise<void>;
  err(line: string): void;
}

let endOnClosedPipe = false;

/**
 * stdout/stderr, waiting for 'drain' when stdout's buffer is full (long audits piped to `less`). A
 * reader that closes the pipe early (`atc audit … | head`) ends the process with exit 0: that is
 * the reader's choice, not an error, and a `--follow` would otherwise poll on for no one.
 */
export const processIo: CliIo = {
  out: (line) => {
    if (!endOnClosedPipe) {
      endOnClosedPipe = true;
      process.stdout.on('error', (error: NodeJS.ErrnoException) => {
        if (error.code !== 'EPIPE') throw error;
        process.exit(0);
      });
    }
    return process.stdout.write(`${line}\n`) ? undefined : once(process.stdout, 'drain').then(() => undefined);
  },
  err: (line) => void process.stderr.write(`${line}\n`),
};

/**
 * stdout/stderr for a command whose exit code is a verdict (`atc verify`): a closed pipe drops the
 * later lines (src/cli/main.ts) but never turns a failed check into exit 0.
 */
export const verdictIo: CliIo = {
  out: (line) => void process.stdout.write(`${line}\n`),
  err: (line) => void process.stderr.write(`${line}\n`),
};

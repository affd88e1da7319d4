import { once } from 'node:events';

/** Line-oriented output for the SQLite commands; `out` may return a promise to apply backpressure. */
export interface SqliteCliIo {
  out(line: string): void | Promise<void>;
  err(line: string): void;
}

let quietOnClosedPipe = false;

/** stdout/stderr, waiting for 'drain' when stdout's buffer is full (long audits piped to `less`). */
export const sqliteProcessIo: SqliteCliIo = {
  out: (line) => {
    if (!quietOnClosedPipe) {
      quietOnClosedPipe = true;
      // `atc audit … | head` closes the pipe early: that is the reader's choice, not an error.
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
 * Splits `args` into positionals and `--name value` / `--flag` options; unknown names are errors.
 * Commands now declare a `CommandSpec` (src/cli/options.ts) instead, which also prints their help.
 */
export function parseOptions(
  args: readonly string[],
  valued: readonly string[],
  flags: readonly string[],
): { readonly positional: string[]; readonly values: Map<string, string>; readonly flags: Set<string> } | { readonly error: string } {
  const positional: string[] = [];
  const values = new Map<string, string>();
  const set = new Set<string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const [name, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    if (flags.includes(name) && inline === undefined) set.add(name);
    else if (valued.includes(name)) {
      const value = inline ?? args[++i];
      if (value === undefined) return { error: `--${name} needs a value` };
      values.set(name, value);
    } else return { error: `unknown option --${name}` };
  }
  return { positional, values, flags: set };
}

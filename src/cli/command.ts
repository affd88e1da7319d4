import type { CommandSpec } from './options';

/** One CLI command: a one-line summary for `atc --help`, its option table, and a runner returning the exit code. */
export interface CliCommand {
  readonly summary: string;
  /** The options `atc <command> --help` describes and the parser accepts (src/cli/options.ts). */
  readonly spec?: CommandSpec;
  run(args: readonly string[]): Promise<number>;
}

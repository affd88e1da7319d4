/** One CLI command: a one-line summary for `atc --help` and a runner returning the exit code. */
export interface CliCommand {
  readonly summary: string;
  run(args: readonly string[]): Promise<number>;
}

import type { UpstreamTarget } from '../integrations/mcp/upstream';
import type { PolicyUpstream } from '../integrations/mcp/policy';

/** Where the upstream may be named; at most one of them is given. */
export interface UpstreamSources {
  /** What follows `--` on the command line. */
  readonly dashDash?: readonly string[] | undefined;
  /** `--upstream-command "<program> [args…]"`: split on whitespace, no shell, no quotes. */
  readonly commandOption?: string | undefined;
  readonly url?: string | undefined;
  /** The policy file's `upstream`. */
  readonly policy?: PolicyUpstream | undefined;
}

/** Split on whitespace only: a quote would suggest a shell that is not there, so it is refused. */
function splitCommandOption(text: string): readonly string[] | { readonly error: string } {
  if (/["'`\\]/.test(text)) return { error: "--upstream-command takes words split on spaces, without quotes or backslashes (no shell runs it); for an argument with spaces use the policy file's \"upstream\": { \"command\": [...] }" };
  return text.split(/\s+/).filter((w) => w !== '');
}

/**
 * The upstream named on a command line or in a policy file: `-- <command> [args…]`,
 * `--upstream-command "<command> [args…]"`, `--url <http(s)://…>`, or the policy's
 * `"upstream": { "command": [...] } | { "url": "…" }`. Naming it twice is refused. The child
 * inherits this process's environment (after the proxy removed its token variable from it).
 */
export function upstreamTarget(sources: UpstreamSources): UpstreamTarget | { readonly error: string } | undefined {
  const given = [sources.dashDash, sources.commandOption, sources.url, sources.policy].filter((s) => s !== undefined).length;
  if (given > 1) return { error: 'name the upstream once: -- <command…>, --upstream-command, --url, or the policy file\'s "upstream"' };
  const url = sources.url ?? (sources.policy !== undefined && 'url' in sources.policy ? sources.policy.url : undefined);
  if (url !== undefined) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return { error: 'the upstream URL must be an absolute http:// or https:// URL' };
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return { error: 'the upstream URL must be an http:// or https:// URL' };
    return { kind: 'http', url: parsed };
  }
  const split = sources.commandOption === undefined ? undefined : splitCommandOption(sources.commandOption);
  if (split !== undefined && 'error' in split) return split;
  const command = sources.dashDash ?? split ?? (sources.policy !== undefined && 'command' in sources.policy ? sources.policy.command : undefined);
  if (command === undefined) return undefined;
  const [program, ...args] = command;
  if (program === undefined || program === '') return { error: 'the upstream command is empty: give the program to run' };
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined) env[name] = value;
  return { kind: 'stdio', command: program, args, env };
}

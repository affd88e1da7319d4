import type { UpstreamTarget } from '../integrations/mcp/upstream';

/**
 * The upstream named on a command line: `-- <command> [args…]` or `--url <http(s)://…>`. The child
 * inherits this process's environment (after the proxy removed its token variable from it).
 */
export function upstreamTarget(command: readonly string[] | undefined, url: string | undefined): UpstreamTarget | { readonly error: string } | undefined {
  if (command !== undefined && url !== undefined) return { error: 'give either -- <command…> or --url, not both' };
  if (url !== undefined) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return { error: '--url needs an absolute http:// or https:// URL' };
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return { error: '--url needs an http:// or https:// URL' };
    return { kind: 'http', url: parsed };
  }
  if (command === undefined) return undefined;
  const [program, ...args] = command;
  if (program === undefined || program === '') return { error: 'nothing after --: give the upstream command' };
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined) env[name] = value;
  return { kind: 'stdio', command: program, args, env };
}

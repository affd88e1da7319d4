import type { CliCommand } from '../command';
import { openLedgerAt, packageVersion, splitCommand } from '../ledgerFile';
import { readTokenFd, readTokenFile } from '../tokenSource';
import { upstreamTarget } from '../upstreamArgs';
import { readPolicyFile } from './issue';
import type { Policy } from '../../integrations/mcp/policy';
import { printable } from '../../integrations/mcp/printable';
import { parseOptions, sqliteProcessIo, type SqliteCliIo } from '../../stores/sqlite/sqliteCliIo';

const usage = `usage: atc proxy --ledger <log.sqlite | postgres://…> (--policy <policy.json> | --token-file <path> | --token-fd N | --token-env NAME)
                 [--quiet] [--on-tool-error consume|refund] [--upstream-timeout-ms N]
                 (--url <http://…> | -- <command> [args…])`;

/**
 * \`atc proxy\`: an MCP server on stdin/stdout that puts the ledger in front of an upstream MCP
 * server. Runs until the client closes stdin (or SIGINT/SIGTERM). stderr: one line per decision.
 */
export async function runProxy(args: readonly string[], io: SqliteCliIo = sqliteProcessIo): Promise<number> {
  const split = splitCommand(args);
  const parsed = parseOptions(split.options, ['ledger', 'policy', 'token-env', 'token-file', 'token-fd', 'url', 'on-tool-error', 'upstream-timeout-ms'], ['quiet', 'help']);
  const fail = (message: string): number => {
    io.err(`atc proxy: ${message}`);
    return 2;
  };
  if ('error' in parsed || parsed.flags.has('help') || parsed.positional.length !== 0 || !parsed.values.has('ledger')) {
    if ('error' in parsed) io.err(`atc proxy: ${parsed.error}`);
    io.err(usage);
    return 'error' in parsed || !parsed.flags.has('help') ? 2 : 0;
  }
  const policyFile = parsed.values.get('policy');
  const tokenEnv = parsed.values.get('token-env');
  const tokenFile = parsed.values.get('token-file');
  const tokenFd = parsed.values.get('token-fd');
  if ([policyFile, tokenEnv, tokenFile, tokenFd].filter((v) => v !== undefined).length !== 1) return fail('give exactly one of --policy, --token-file, --token-fd or --token-env');
  const onToolError = parsed.values.get('on-tool-error') ?? 'consume';
  if (onToolError !== 'consume' && onToolError !== 'refund') return fail('--on-tool-error is consume or refund');
  const timeoutText = parsed.values.get('upstream-timeout-ms');
  const upstreamTimeoutMs = timeoutText === undefined ? undefined : Number(timeoutText);
  if (upstreamTimeoutMs !== undefined && (!Number.isSafeInteger(upstreamTimeoutMs) || upstreamTimeoutMs < 1)) return fail('--upstream-timeout-ms needs a positive integer');

  // Read the token and take it out of this process's environment before any child is started.
  let token: string | undefined;
  if (tokenEnv !== undefined) {
    token = process.env[tokenEnv];
    delete process.env[tokenEnv];
    if (token === undefined || token === '') return fail(`the environment variable ${tokenEnv} is not set`);
  }
  // A file or descriptor keeps the token out of /proc/<pid>/environ; both are closed before the upstream starts.
  try {
    if (tokenFile !== undefined) token = readTokenFile(tokenFile);
    if (tokenFd !== undefined) token = await readTokenFd(tokenFd);
  } catch (error) {
    return fail((error as Error).message);
  }
  const target = upstreamTarget(split.command, parsed.values.get('url'));
  if (target === undefined) return fail('give the upstream: -- <command> [args…] or --url <http://…>');
  if ('error' in target) return fail(target.error);
  let policy: Policy | undefined;
  try {
    if (policyFile !== undefined) policy = readPolicyFile(policyFile);
  } catch (error) {
    return fail((error as Error).message);
  }

  const quiet = parsed.flags.has('quiet');
  const report = (line: string): void => {
    if (!quiet) io.err(`atc proxy: ${line}`);
  };
  // Loaded here, not at the top: `atc --help` and the other commands do not load the MCP SDK.
  const { startProxy } = await import('../../integrations/mcp/startProxy');
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const { dispatchRequestsFirst } = await import('../../integrations/mcp/requestsFirst');
  const { boundStdioFrames } = await import('../../integrations/mcp/boundedFrames');
  let ledger;
  try {
    ledger = await openLedgerAt(parsed.values.get('ledger') as string, { create: true, onToolError });
  } catch (error) {
    return fail((error as Error).message);
  }
  let started;
  try {
    started = await startProxy({
      ledger,
      upstream: target,
      grant: policy !== undefined ? { policy } : { token: token as string },
      version: packageVersion(),
      report,
      ...(upstreamTimeoutMs !== undefined ? { upstreamTimeoutMs } : {}),
    });
  } catch (error) {
    await ledger.close();
    // The message can carry the upstream's own text (a failed tools/list): escaped for the terminal.
    io.err(`atc proxy: ${printable((error as Error).message)}`);
    return 1;
  }
  for (const [name, why] of started.tools.refused) io.err(`atc proxy: tool ${printable(name)} refused: ${printable(why)}`);
  // MCP tools declare no cost, so nothing the upstream does is charged to a meter (docs/mcp.md).
  if (policy?.budget.meters !== undefined) io.err('atc proxy: budget.meters: the upstream\'s MCP tools declare no cost, so calls through this proxy charge no meter');
  report(`grant ${started.grantId}${started.issuedToken !== undefined ? ' issued from the policy' : ''}; ${started.tools.registered.size} upstream tools registered`);

  const closed = new Promise<void>((resolve) => {
    started.server.onclose = () => resolve();
    started.upstream.onclose = () => resolve();
    // The SDK's stdio server transport does not end on EOF: a client that closes stdin has gone.
    process.stdin.once('end', () => resolve());
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  const clientTransport = new StdioServerTransport();
  // An oversized message from the client is refused alone; the proxy keeps serving.
  boundStdioFrames(clientTransport, 'the client', report);
  await started.server.connect(clientTransport);
  dispatchRequestsFirst(started.server, clientTransport);
  await closed;
  await started.server.close().catch(() => undefined);
  await started.upstream.close().catch(() => undefined);
  await ledger.close();
  return 0;
}

export const proxyCommand: CliCommand = {
  summary: 'MCP proxy on stdio: every tools/call through the ledger before the upstream sees it',
  run: (args) => runProxy(args),
};

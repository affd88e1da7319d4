import type { CliCommand } from '../command';
import { openLedgerAt, packageVersion } from '../ledgerFile';
import { readTokenFd, readTokenFile } from '../tokenSource';
import { upstreamTarget } from '../upstreamArgs';
import { readPolicyFile } from './issue';
import type { Policy } from '../../integrations/mcp/policy';
import { printable } from '../../text/printable';
import { processIo, type CliIo } from '../io';
import { creatingLedgerOption, parseOrExit, upstreamOptions, usageError, type CommandSpec } from '../options';

// One option per line: commands added later extend this table, and the help follows it.
export const proxySpec: CommandSpec = {
  name: 'proxy',
  summary: 'MCP proxy on stdio: every tools/call through the ledger before the upstream sees it',
  usage: [
    '--ledger <log.sqlite | postgres://…> (--policy <policy.json> | --token-file <path> | --token-fd N | --token-env NAME) [options] -- <command> [args…]',
    '--ledger <log.sqlite | postgres://…> (--policy <policy.json> | --token-file <path> | --token-fd N | --token-env NAME) [options] --upstream-command "<command> [args…]"',
    '--ledger <log.sqlite | postgres://…> (--policy <policy.json> | --token-file <path> | --token-fd N | --token-env NAME) [options] --url <http://…>',
    '--ledger <log.sqlite | postgres://…> --policy <policy.json> [options]      (the policy file names the "upstream")',
  ],
  description: 'An MCP server on stdin/stdout in front of an upstream MCP server; runs until the client closes stdin (or SIGINT/SIGTERM). stderr: one line per decision. Name the upstream once: after --, with --upstream-command (for wrappers that take -- themselves, such as the MCP Inspector\'s --cli), with --url, or as "upstream" in the policy file.',
  rest: true,
  options: [
    creatingLedgerOption,
    { name: 'policy', value: '<policy.json>', description: 'issue a grant from this policy file at start (docs/mcp.md); or give the token with one of the --token-* options' },
    { name: 'token-file', value: '<path>', description: 'use the grant whose token is in this file (a regular file, not a symlink, mode 0600 or stricter); the token never enters the environment' },
    { name: 'token-fd', value: 'N', description: 'use the grant whose token is read from this open file descriptor (e.g. 3 with `3<token.txt`), then closed' },
    { name: 'token-env', value: 'NAME', description: 'use the grant whose token is in this environment variable (removed from the environment before the upstream starts, but still readable in /proc/<pid>/environ: prefer --token-file or --token-fd)' },
    ...upstreamOptions,
    { name: 'on-tool-error', value: 'consume|refund', description: 'whether a call the upstream fails keeps its budget (consume, default) or gives it back (refund)' },
    { name: 'upstream-timeout-ms', value: 'N', description: 'fail a call the upstream has not answered in N ms (the ledger settles it failed)' },
    { name: 'approver', value: 'NAME', description: 'who is recorded as the decider when the client answers an approval question by MCP elicitation (default mcp-client; docs/approvals.md)' },
    { name: 'quiet', description: 'no line per decision on stderr (errors still go there)' },
    { name: 'otel', description: 'export spans and metrics over OTLP/HTTP, configured by the standard OTEL_* variables (docs/observability.md)' },
  ],
};

/**
 * \`atc proxy\`: an MCP server on stdin/stdout that puts the ledger in front of an upstream MCP
 * server. Runs until the client closes stdin (or SIGINT/SIGTERM). stderr: one line per decision.
 */
export async function runProxy(args: readonly string[], io: CliIo = processIo): Promise<number> {
  const parsed = await parseOrExit(proxySpec, args, io);
  if (typeof parsed === 'number') return parsed;
  const fail = (message: string): number => usageError(proxySpec, io, message);
  const policyFile = parsed.values.get('policy');
  const tokenEnv = parsed.values.get('token-env');
  const tokenFile = parsed.values.get('token-file');
  const tokenFd = parsed.values.get('token-fd');
  if ([policyFile, tokenEnv, tokenFile, tokenFd].filter((v) => v !== undefined).length !== 1) return fail('give exactly one of --policy, --token-file, --token-fd or --token-env');
  const onToolError = parsed.values.get('on-tool-error') ?? 'consume';
  if (onToolError !== 'consume' && onToolError !== 'refund') return fail('--on-tool-error is consume or refund');
  const approver = parsed.values.get('approver');
  if (approver !== undefined && !/^[^\u0000-\u001f\u007f-\u009f]{1,256}$/u.test(approver)) return fail('--approver needs 1-256 characters without control characters');
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
  let policy: Policy | undefined;
  try {
    if (policyFile !== undefined) policy = readPolicyFile(policyFile);
  } catch (error) {
    return fail((error as Error).message);
  }
  const target = upstreamTarget({ dashDash: parsed.rest, commandOption: parsed.values.get('upstream-command'), url: parsed.values.get('url'), policy: policy?.upstream });
  if (target === undefined) return fail('name the upstream: -- <command> [args…], --upstream-command "<command> [args…]", --url <http://…>, or "upstream" in the policy file');
  if ('error' in target) return fail(target.error);

  const quiet = parsed.flags.has('quiet');
  const report = (line: string): void => {
    if (!quiet) io.err(`atc proxy: ${line}`);
  };
  // Loaded here, not at the top: `atc --help` and the other commands do not load the MCP SDK.
  const { startProxy } = await import('../../integrations/mcp/startProxy');
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const { dispatchRequestsFirst } = await import('../../integrations/mcp/requestsFirst');
  const { boundStdioFrames } = await import('../../integrations/mcp/boundedFrames');
  // Loaded only with --otel: no other run of the proxy loads OpenTelemetry.
  const otel = parsed.flags.has('otel') ? await import('../../otel/cliTelemetry') : undefined;
  const exporting = otel?.startOtlpExport('atc-proxy');
  let ledger;
  try {
    ledger = await openLedgerAt(parsed.values.get('ledger') as string, { create: true, groupCommit: true, onToolError });
  } catch (error) {
    await exporting?.shutdown();
    return fail((error as Error).message);
  }
  if (otel !== undefined) otel.instrumentLedger(ledger);
  let started;
  try {
    started = await startProxy({
      ledger,
      upstream: target,
      grant: policy !== undefined ? { policy } : { token: token as string },
      version: packageVersion(),
      report,
      ...(upstreamTimeoutMs !== undefined ? { upstreamTimeoutMs } : {}),
      ...(approver !== undefined ? { approver } : {}),
      ...(otel !== undefined ? { telemetry: otel.mcpTelemetry() } : {}),
    });
  } catch (error) {
    await ledger.close();
    await exporting?.shutdown();
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
  // What is still buffered is exported before the process exits.
  await exporting?.shutdown();
  return 0;
}

export const proxyCommand: CliCommand = {
  summary: proxySpec.summary,
  spec: proxySpec,
  run: (args) => runProxy(args),
};

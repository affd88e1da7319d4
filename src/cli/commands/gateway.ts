import type { CliCommand } from '../command';
import { openLedgerAt, packageVersion } from '../ledgerFile';
import { processIo, type CliIo } from '../io';
import { parseOrExit, type CommandSpec } from '../options';

export const gatewaySpec: CommandSpec = {
  name: 'gateway',
  summary: 'MCP gateway over Streamable HTTP for many agents: every tools/call through the ledger (--config gateway.json)',
  usage: ['--config <gateway.json> [--quiet] [--upstream-timeout-ms N] [--otel]'],
  description: 'Prints `listening on <publicUrl>` on stdout once it serves; runs until SIGTERM or SIGINT (docs/gateway.md).',
  options: [
    { name: 'config', value: '<gateway.json>', required: true, description: 'the gateway config (docs/gateway.md); a malformed one fails at start naming the field' },
    { name: 'quiet', description: 'no line per decision on stderr' },
    { name: 'upstream-timeout-ms', value: '<N>', description: 'per upstream request, in ms (progress resets it); default 60000' },
    { name: 'otel', description: 'export spans and metrics over OTLP/HTTP, configured by the standard OTEL_* variables (docs/observability.md)' },
  ],
};

/**
 * \`atc gateway\`: many agents over MCP Streamable HTTP, every tools/call through the ledger.
 * Prints \`listening on <publicUrl>\` on stdout once it serves; runs until SIGTERM or SIGINT, then
 * lets calls in flight finish (bounded), settles them, closes the ledger and exits 0.
 */
export async function runGateway(args: readonly string[], io: CliIo = processIo): Promise<number> {
  const parsed = await parseOrExit(gatewaySpec, args, io);
  if (typeof parsed === 'number') return parsed;
  const timeoutText = parsed.values.get('upstream-timeout-ms');
  const upstreamTimeoutMs = timeoutText === undefined ? undefined : Number(timeoutText);
  if (upstreamTimeoutMs !== undefined && (!Number.isSafeInteger(upstreamTimeoutMs) || upstreamTimeoutMs < 1)) {
    io.err('atc gateway: --upstream-timeout-ms needs a positive integer');
    return 2;
  }
  // Loaded here: `atc --help` and the other commands do not load the MCP SDK or jose.
  const { readGatewayConfigFile } = await import('../../integrations/gateway/configFile');
  let config;
  try {
    config = readGatewayConfigFile(parsed.values.get('config') as string);
  } catch (error) {
    io.err(`atc gateway: ${(error as Error).message}`);
    return 2;
  }
  const quiet = parsed.flags.has('quiet');
  const report = (line: string): void => {
    if (!quiet) io.err(`atc gateway: ${line}`);
  };
  const { startGateway } = await import('../../integrations/gateway/gateway');
  const { gatewayAuthenticator } = await import('../../integrations/gateway/authenticators');
  // Loaded only with --otel: no other run of the gateway loads OpenTelemetry.
  const otel = parsed.flags.has('otel') ? await import('../../otel/cliTelemetry') : undefined;
  const exporting = otel?.startOtlpExport('atc-gateway');
  let ledger;
  try {
    ledger = await openLedgerAt(config.ledger, { create: true, groupCommit: true });
  } catch (error) {
    await exporting?.shutdown();
    io.err(`atc gateway: ${(error as Error).message}`);
    return 2;
  }
  let gateway;
  try {
    const authenticator = gatewayAuthenticator(config, ledger);
    gateway = await startGateway({ config, ledger, authenticator, version: packageVersion(), report, ...(upstreamTimeoutMs !== undefined ? { upstreamTimeoutMs } : {}), ...(otel !== undefined ? { telemetry: otel.mcpTelemetry(), invoke: otel.instrumentGrantInvocations(ledger) } : {}) });
  } catch (error) {
    await ledger.close();
    await exporting?.shutdown();
    io.err(`atc gateway: ${(error as Error).message}`);
    return 1;
  }
  await io.out(`listening on ${gateway.url.href}`);
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  report('shutting down: calls in flight finish, then the ledger closes');
  await gateway.shutdown();
  await ledger.close();
  // What is still buffered is exported before the process exits.
  await exporting?.shutdown();
  return 0;
}

export const gatewayCommand: CliCommand = {
  summary: gatewaySpec.summary,
  spec: gatewaySpec,
  run: (args) => runGateway(args),
};

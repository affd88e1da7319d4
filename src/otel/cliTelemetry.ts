// What `--otel` loads, in one module: the SDK set-up, the ledger's instrumentation, MCP spans.
export { startOtlpExport } from './otlpExport';
export { instrumentLedger } from './instrumentLedger';
export { instrumentGrantInvocations } from './grantInvocations';
export { mcpTelemetry } from './mcpTelemetry';

// agent-tool-capabilities/otel: OpenTelemetry spans and metrics for a ledger (docs/observability.md).
// Loads only @opentelemetry/api (an optional peer dependency); the root entry never loads this module.
// The SDK set-up of `--otel` (otlpExport.ts) is the CLI's, not exported here.
export { instrumentLedger, type InstrumentLedgerOptions, type LedgerInstrumentation } from './instrumentLedger';
export { attr as otelAttributes, metricNames as otelMetricNames } from './attributes';
export { mcpTelemetry } from './mcpTelemetry';

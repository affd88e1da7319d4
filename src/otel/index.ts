// agent-tool-capabilities/otel: OpenTelemetry spans and metrics for a ledger (docs/observability.md).
// Needs the optional peer dependency @opentelemetry/api; the root entry never loads this module.
export { instrumentLedger, type InstrumentLedgerOptions, type LedgerInstrumentation } from './instrumentLedger';
export { attr as otelAttributes, metricNames as otelMetricNames } from './attributes';

import { context, metrics, propagation, trace, type MeterProvider, type TracerProvider } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider as SdkMeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';

/** The OpenTelemetry SDK as `atc proxy --otel` and `atc gateway --otel` run it. */
export interface OtlpExport {
  readonly tracerProvider: TracerProvider;
  readonly meterProvider: MeterProvider;
  /** Exports what is still buffered and stops (bounded by the exporters' own timeouts). */
  shutdown(): Promise<void>;
}

/**
 * Starts the SDK exporting spans and metrics over OTLP/HTTP, configured by the standard variables
 * (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `…_HEADERS`,
 * `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER`, `OTEL_METRIC_EXPORT_INTERVAL`,
 * which the SDK reads itself), and registers it globally with the AsyncLocalStorage context manager
 * and the W3C trace-context propagator.
 */
export function startOtlpExport(defaultServiceName: string): OtlpExport {
  const detected = detectResources({ detectors: [envDetector] });
  const resource = resourceFromAttributes({ 'service.name': defaultServiceName }).merge(detected);
  const tracerProvider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] });
  const interval = Number(process.env.OTEL_METRIC_EXPORT_INTERVAL ?? '60000');
  const meterProvider = new SdkMeterProvider({
    resource,
    readers: [new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter(), exportIntervalMillis: Number.isSafeInteger(interval) && interval > 0 ? interval : 60_000 })],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(tracerProvider);
  metrics.setGlobalMeterProvider(meterProvider);
  return {
    tracerProvider,
    meterProvider,
    async shutdown() {
      await Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown()]);
    },
  };
}

import { AggregationTemporality, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { instrumentLedger } from '../../src/otel';
import { pendingApprovalsMetric } from '../../src/otel/approvalTelemetry';
import { closeLedgers, hour, paymentsLedger, pendingOf } from '../support/approvals';

class TestReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

afterEach(closeLedgers);

describe('OpenTelemetry marks the wait for a person', () => {
  it('span events for the request and the resolution at log time, and the pending-approvals gauge', async () => {
    const exporter = new InMemorySpanExporter();
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const reader = new TestReader();
    const meterProvider = new MeterProvider({ readers: [reader] });
    const { ledger, clock } = await paymentsLedger();
    const { grantId, token } = await ledger.issue({ tools: ['pay'], expiresAt: clock.now() + hour, budget: { calls: 5, inputBytes: 1_000 }, approvals: { pay: true } });
    instrumentLedger(ledger, { tracerProvider, meterProvider });
    const outcome = ledger.invoke(token, 'pay', { to: 'secret-payee', amount: 5 });
    const [pending] = await pendingOf(ledger);
    const gauge = async (): Promise<unknown> => {
      const { resourceMetrics } = await reader.collect();
      const metric = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === pendingApprovalsMetric);
      return metric?.dataPoints[0]?.value;
    };
    expect(await gauge()).toBe(1);
    clock.advance(250);
    await ledger.approve(pending!.approvalId, { by: 'alice' });
    await outcome;
    expect(await gauge()).toBe(0);
    const [span] = exporter.getFinishedSpans();
    expect(span!.name).toBe('execute_tool pay');
    expect(span!.attributes['atc.grant.id']).toBe(grantId);
    expect(span!.events.map((e) => [e.name, e.attributes?.['atc.approval.outcome'] ?? null, e.attributes?.['atc.approval.by'] ?? null])).toEqual([
      ['atc.approval.requested', null, null],
      ['atc.approval.resolved', 'approved', 'alice'],
    ]);
    const recorded = JSON.stringify({ attributes: span!.attributes, events: span!.events, name: span!.name });
    expect(recorded).not.toContain('secret-payee');
    expect(recorded).not.toContain(token);
  });
});

import { context, trace, SpanStatusCode } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { AggregationTemporality, MeterProvider, MetricReader, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { createLedger, type Ledger } from '../../src';
import { instrumentLedger } from '../../src/otel';

class TestReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

const T = 1_700_000_000_000;
const secretToken = (issued: { token: string }): string => issued.token;
const secretText = 'the-secret-argument-value-7f3a';

async function setup(): Promise<{ ledger: Ledger; token: string; grantId: string; spans: () => ReadableSpan[]; metrics: () => Promise<ResourceMetrics>; tracer: BasicTracerProvider }> {
  const exporter = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new TestReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  let now = T;
  const ledger = createLedger({ clock: () => now++ });
  await ledger.registerTool({
    name: 'notes.write',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
    run: async (args) => {
      if (args.text === 'fail') throw new Error(`tool failed on ${String(args.text)}`);
      return 'ok';
    },
  });
  const issued = await ledger.issue({ tools: ['notes.write'], budget: { calls: 3, inputBytes: 10_000 }, expiresAt: T + 1_000_000 });
  instrumentLedger(ledger, { tracerProvider: tracer, meterProvider });
  return {
    ledger,
    token: secretToken(issued),
    grantId: issued.grantId,
    spans: () => exporter.getFinishedSpans() as ReadableSpan[],
    metrics: async () => (await reader.collect()).resourceMetrics,
    tracer,
  };
}

beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});
afterAll(() => {
  context.disable();
});

describe('instrumentLedger spans', () => {
  test('an admitted call gets an execute_tool span carrying its decision event seq and hash', async () => {
    const { ledger, token, grantId, spans } = await setup();
    const outcome = await ledger.invoke(token, 'notes.write', { text: secretText });
    expect(outcome.status).toBe('completed');
    const [span] = spans();
    const admitted = ledger.events().find((e) => e.type === 'call.admitted');
    const completed = ledger.events().find((e) => e.type === 'call.completed');
    expect(span?.name).toBe('execute_tool notes.write');
    expect(span?.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'notes.write',
      'gen_ai.tool.call.id': outcome.callId,
      'atc.grant.id': grantId,
      'atc.decision': 'admitted',
      'atc.outcome': 'completed',
      'atc.event.seq': admitted?.seq,
      'atc.event.hash': admitted?.hash,
      'atc.settlement.seq': completed?.seq,
      'atc.settlement.hash': completed?.hash,
    });
    expect(span?.status.code).toBe(SpanStatusCode.UNSET);
  });

  test('a rejection is an error span with its reason and the rejection event', async () => {
    const { ledger, token, spans } = await setup();
    const outcome = await ledger.invoke(token, 'notes.write', { text: 1 });
    expect(outcome).toMatchObject({ status: 'rejected', reason: 'invalid_arguments' });
    const rejected = ledger.events().find((e) => e.type === 'call.rejected');
    const [span] = spans();
    expect(span?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'invalid_arguments' });
    expect(span?.attributes).toMatchObject({ 'atc.decision': 'rejected', 'atc.reason': 'invalid_arguments', 'error.type': 'invalid_arguments', 'atc.event.seq': rejected?.seq, 'atc.event.hash': rejected?.hash });
  });

  test('a tool failure is an error span naming only the kind of failure', async () => {
    const { ledger, token, spans } = await setup();
    const outcome = await ledger.invoke(token, 'notes.write', { text: 'fail' });
    expect(outcome.status).toBe('failed');
    const [span] = spans();
    expect(span?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'tool_error' });
    expect(span?.attributes['atc.outcome']).toBe('failed');
    expect(JSON.stringify(span?.events)).not.toContain('fail');
  });

  test('the span is a child of the span active where invoke was called, and the tool runs inside it', async () => {
    const { ledger, token, spans, tracer } = await setup();
    let activeInTool: string | undefined;
    await ledger.registerTool({ name: 'probe', inputSchema: { type: 'object' }, run: async () => (activeInTool = trace.getActiveSpan()?.spanContext().spanId) });
    const probe = await ledger.issue({ tools: ['probe'], budget: { calls: 1, inputBytes: 100 }, expiresAt: T + 1_000_000 });
    const parent = tracer.getTracer('test').startSpan('agent step');
    await context.with(trace.setSpan(context.active(), parent), () => ledger.invoke(probe.token, 'probe', {}));
    parent.end();
    const span = spans().find((s) => s.name === 'execute_tool probe');
    expect(span?.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    expect(span?.spanContext().traceId).toBe(parent.spanContext().traceId);
    expect(activeInTool).toBe(span?.spanContext().spanId);
    void token;
  });

  test('a retry answered by idempotency replay carries the seq and hash of its own call.replayed event', async () => {
    const { ledger, token, spans } = await setup();
    const first = await ledger.invoke(token, 'notes.write', { text: 'a' }, { idempotencyKey: 'k1' });
    const retry = await ledger.invoke(token, 'notes.write', { text: 'a' }, { idempotencyKey: 'k1' });
    expect(retry).toMatchObject({ callId: first.callId, replayed: true });
    const replayed = ledger.events().find((e) => e.type === 'call.replayed');
    expect(replayed).toMatchObject({ replayOf: first.callId });
    const span = spans()[1];
    expect(span?.name).toBe('execute_tool notes.write');
    expect(span?.attributes).toMatchObject({ 'gen_ai.tool.call.id': first.callId, 'atc.decision': 'replayed', 'atc.event.seq': replayed?.seq, 'atc.event.hash': replayed?.hash });
    expect(span?.attributes['atc.settlement.seq']).toBeUndefined();
  });

  test('a retry replayed while the first call still runs leaves the first call its own events', async () => {
    const { ledger, spans } = await setup();
    let release: () => void = () => undefined;
    const running = new Promise<void>((resolve) => (release = resolve));
    await ledger.registerTool({ name: 'slow', inputSchema: { type: 'object' }, run: async () => running.then(() => 'done') });
    const grant = await ledger.issue({ tools: ['slow'], budget: { calls: 5, inputBytes: 1000 }, expiresAt: T + 1_000_000 });
    const first = ledger.invoke(grant.token, 'slow', {}, { idempotencyKey: 'k' });
    const retries = [ledger.invoke(grant.token, 'slow', {}, { idempotencyKey: 'k' }), ledger.invoke(grant.token, 'slow', {}, { idempotencyKey: 'k' })];
    // Both retries are decided (logged call.replayed) while the first still runs.
    const decided = (): number => ledger.events().filter((e) => e.type === 'call.replayed').length;
    while (decided() < 2) await new Promise((resolve) => setImmediate(resolve));
    release();
    const outcomes = await Promise.all([first, ...retries]);
    const admitted = ledger.events().find((e) => e.type === 'call.admitted' && e.tool === 'slow');
    const replays = ledger.events().filter((e) => e.type === 'call.replayed');
    const byDecision = (d: string) => spans().filter((s) => s.attributes['atc.decision'] === d && s.name === 'execute_tool slow');
    expect(byDecision('admitted').map((s) => s.attributes['atc.event.seq'])).toEqual([admitted?.seq]);
    expect(byDecision('replayed').map((s) => s.attributes['atc.event.seq']).sort()).toEqual(replays.map((e) => e.seq).sort());
    expect(outcomes.every((o) => o.callId === outcomes[0]?.callId)).toBe(true);
  });

  test('a span the sampler drops records nothing, while the call is still counted', async () => {
    const { AlwaysOffSampler } = await import('@opentelemetry/sdk-trace-base');
    const exporter = new InMemorySpanExporter();
    const reader = new TestReader();
    const ledger = createLedger({ clock: () => T });
    await ledger.registerTool({ name: 't', inputSchema: { type: 'object' }, run: async () => 'ok' });
    const grant = await ledger.issue({ tools: ['t'], budget: { calls: 5, inputBytes: 1000 }, expiresAt: T + 10 });
    instrumentLedger(ledger, { tracerProvider: new BasicTracerProvider({ sampler: new AlwaysOffSampler(), spanProcessors: [new SimpleSpanProcessor(exporter)] }), meterProvider: new MeterProvider({ readers: [reader] }) });
    expect((await ledger.invoke(grant.token, 't', {})).status).toBe('completed');
    expect(exporter.getFinishedSpans()).toHaveLength(0);
    const counted = (await reader.collect()).resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).filter((m) => m.descriptor.name === 'atc.decisions').flatMap((m) => m.dataPoints as { attributes: Record<string, unknown>; value: unknown }[]);
    expect(counted).toEqual([expect.objectContaining({ attributes: { 'atc.decision': 'admitted', 'atc.outcome': 'completed', 'gen_ai.tool.name': 't' }, value: 1 })]);
  });

  test('no span or metric carries the token or an argument value', async () => {
    const { ledger, token, spans, metrics } = await setup();
    await ledger.invoke(token, 'notes.write', { text: secretText });
    await ledger.invoke(token, 'notes.write', { text: secretText, extra: secretText });
    await ledger.invoke(`${token}x`, 'notes.write', { text: secretText });
    const exported = JSON.stringify({ spans: spans().map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, status: s.status })), metrics: await metrics() });
    expect(exported).not.toContain(secretText);
    expect(exported).not.toContain(token);
    expect(exported).not.toContain(token.slice(8, 40));
  });

  test('uninstrument restores the ledger own invoke', async () => {
    const { ledger, token, spans } = await setup();
    const instrumentation = instrumentLedger(ledger, { tracerProvider: new BasicTracerProvider() });
    instrumentation.uninstrument();
    // The first instrumentation (setup's) is what remains.
    await ledger.invoke(token, 'notes.write', { text: 'a' });
    expect(spans()).toHaveLength(1);
  });
});

describe('instrumentLedger metrics', () => {
  const points = (rm: ResourceMetrics, name: string) => rm.scopeMetrics.flatMap((s) => s.metrics).filter((m) => m.descriptor.name === name).flatMap((m) => m.dataPoints as { attributes: Record<string, unknown>; value: unknown }[]);

  test('decisions are counted by decision, reason and outcome', async () => {
    const { ledger, token, metrics } = await setup();
    await ledger.invoke(token, 'notes.write', { text: 'a' });
    await ledger.invoke(token, 'notes.write', { text: 2 });
    await ledger.invoke(token, 'nope', {});
    const counted = points(await metrics(), 'atc.decisions').map((p) => ({ attributes: p.attributes, value: p.value }));
    expect(counted).toHaveLength(3);
    expect(counted).toEqual(expect.arrayContaining([
      { attributes: { 'atc.decision': 'admitted', 'atc.outcome': 'completed', 'gen_ai.tool.name': 'notes.write' }, value: 1 },
      { attributes: { 'atc.decision': 'rejected', 'atc.outcome': 'rejected', 'atc.reason': 'invalid_arguments', 'gen_ai.tool.name': 'notes.write' }, value: 1 },
      // An unknown tool's name is the agent's own text: not an attribute of a metric.
      { attributes: { 'atc.decision': 'rejected', 'atc.outcome': 'rejected', 'atc.reason': 'unknown_tool' }, value: 1 },
    ]));
  });

  test('budget gauges report used and limit for the grants called, at most budgetGrantsMax of them', async () => {
    const exporterTracer = new BasicTracerProvider();
    const reader = new TestReader();
    const meterProvider = new MeterProvider({ readers: [reader] });
    const ledger = createLedger({ clock: () => T });
    await ledger.registerTool({ name: 't', inputSchema: { type: 'object' }, run: async () => 'ok' });
    const grants = [];
    for (let i = 0; i < 3; i++) grants.push(await ledger.issue({ tools: ['t'], budget: { calls: 5, inputBytes: 1000 }, expiresAt: T + 10 }));
    instrumentLedger(ledger, { tracerProvider: exporterTracer, meterProvider, budgetGrantsMax: 2 });
    for (const g of grants) await ledger.invoke(g.token, 't', {});
    await ledger.invoke(grants[2]!.token, 't', {});
    const rm = (await reader.collect()).resourceMetrics;
    const used = points(rm, 'atc.budget.used');
    const grantIds = new Set(used.map((p) => p.attributes['atc.grant.id']));
    expect(grantIds).toEqual(new Set([grants[1]!.grantId, grants[2]!.grantId]));
    expect(used).toContainEqual(expect.objectContaining({ attributes: { 'atc.grant.id': grants[2]!.grantId, 'atc.budget.dimension': 'calls' }, value: 2 }));
    expect(points(rm, 'atc.budget.limit')).toContainEqual(expect.objectContaining({ attributes: { 'atc.grant.id': grants[2]!.grantId, 'atc.budget.dimension': 'calls' }, value: 5 }));
  });
});

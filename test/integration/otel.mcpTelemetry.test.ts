import { context, propagation, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { carrierOf, mcpTelemetry } from '../../src/otel/mcpTelemetry';

const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
const parentId = '00f067aa0ba902b7';
const traceparent = `00-${traceId}-${parentId}-01`;

function setup() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, telemetry: mcpTelemetry(provider) };
}

beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
});
afterAll(() => {
  context.disable();
  propagation.disable();
});

test('a tools/call continues the traceparent found in the request _meta in a server span with the MCP attributes', async () => {
  const { exporter, telemetry } = setup();
  await telemetry.serverRequest({ method: 'tools/call', target: 'read_file', meta: { traceparent, progressToken: 3 }, sessionId: 's-1', requestId: 7 }, async () => ({ content: [] }));
  const [span] = exporter.getFinishedSpans();
  expect(span?.name).toBe('tools/call read_file');
  expect(span?.kind).toBe(SpanKind.SERVER);
  expect(span?.spanContext().traceId).toBe(traceId);
  expect(span?.parentSpanContext?.spanId).toBe(parentId);
  expect(span?.attributes).toEqual({ 'mcp.method.name': 'tools/call', 'mcp.session.id': 's-1', 'jsonrpc.request.id': '7', 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'read_file' });
});

test('the upstream request carries the context of a client span that is a child of the server span', async () => {
  const { exporter, telemetry } = setup();
  let sent: Readonly<Record<string, string>> = {};
  await telemetry.serverRequest({ method: 'tools/call', target: 't', meta: { traceparent } }, () => telemetry.upstreamRequest({ method: 'tools/call', target: 't' }, async (meta) => (sent = meta)));
  const [client, server] = exporter.getFinishedSpans();
  expect(client?.kind).toBe(SpanKind.CLIENT);
  expect(client?.parentSpanContext?.spanId).toBe(server?.spanContext().spanId);
  expect(sent.traceparent).toBe(`00-${traceId}-${client?.spanContext().spanId}-01`);
});

test('an isError result or a thrown error marks the span as an error without its message', async () => {
  const { exporter, telemetry } = setup();
  await telemetry.serverRequest({ method: 'tools/call', target: 't' }, async () => ({ isError: true, content: [{ type: 'text', text: 'secret detail' }] }));
  await expect(telemetry.serverRequest({ method: 'ping' }, async () => {
    throw Object.assign(new Error('upstream said secret detail'), { code: -32603 });
  })).rejects.toThrow('secret detail');
  const [errorResult, thrown] = exporter.getFinishedSpans();
  expect(errorResult?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'tool_error' });
  expect(thrown?.status.code).toBe(SpanStatusCode.ERROR);
  expect(thrown?.attributes['error.type']).toBe('-32603');
  expect(JSON.stringify([errorResult, thrown].map((s) => [s?.attributes, s?.status, s?.events]))).not.toContain('secret');
});

describe('hostile _meta', () => {
  test('only own string traceparent and tracestate entries of bounded length are read', () => {
    expect(carrierOf({ traceparent, tracestate: 'a=b', other: 'x' })).toEqual({ traceparent, tracestate: 'a=b' });
    expect(carrierOf({ traceparent: 'x'.repeat(10_000) })).toEqual({});
    expect(carrierOf({ traceparent: 42 })).toEqual({});
    expect(carrierOf(Object.create({ traceparent }))).toEqual({});
    expect(carrierOf(['x'])).toEqual({});
    expect(carrierOf(null)).toEqual({});
  });

  test('a getter is never called and a revoked Proxy is no context', () => {
    let called = false;
    const withGetter = Object.defineProperty({}, 'traceparent', { get: () => ((called = true), traceparent), enumerable: true });
    expect(carrierOf(withGetter)).toEqual({});
    expect(called).toBe(false);
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    expect(carrierOf(proxy)).toEqual({});
  });

  test('a malformed traceparent starts a new trace instead of failing the request', async () => {
    const { exporter, telemetry } = setup();
    await telemetry.serverRequest({ method: 'tools/call', target: 'bad name!', meta: { traceparent: '00-zz-yy-01' } }, async () => ({}));
    const [span] = exporter.getFinishedSpans();
    expect(span?.parentSpanContext).toBeUndefined();
    expect(span?.name).toBe('tools/call');
    expect(span?.attributes['gen_ai.tool.name']).toBeUndefined();
  });
});

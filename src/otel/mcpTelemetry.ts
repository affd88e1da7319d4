import { context, propagation, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type TextMapGetter, type TracerProvider } from '@opentelemetry/api';
import type { McpRequestInfo, McpTelemetry } from '../integrations/mcp/telemetry';
import { attr, executeTool, instrumentName } from './attributes';

/** W3C traceparent is 55 characters (version 00); tracestate is at most 32 members of ≤ 256 bytes, capped lower here. */
const traceparentMax = 128;
const tracestateMax = 1_024;
const namePattern = /^[A-Za-z0-9_.\-/]{1,128}$/;

type Carrier = Readonly<Record<string, string>>;
const getter: TextMapGetter<Carrier> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => (Object.prototype.hasOwnProperty.call(carrier, key) ? carrier[key] : undefined),
};

/**
 * The trace context a client sent in `params._meta`: only own string `traceparent` and `tracestate`
 * entries of bounded length are read (a getter, a Proxy or any other value is ignored).
 */
export function carrierOf(meta: unknown): Carrier {
  if (typeof meta !== 'object' || meta === null) return {};
  const carrier: Record<string, string> = {};
  try {
    if (Array.isArray(meta)) return {};
    for (const [key, max] of [['traceparent', traceparentMax], ['tracestate', tracestateMax]] as const) {
      const own = Object.getOwnPropertyDescriptor(meta, key);
      const value: unknown = own !== undefined && 'value' in own ? own.value : undefined;
      if (typeof value === 'string' && value.length <= max) carrier[key] = value;
    }
  } catch {
    return {}; // a revoked Proxy or a throwing trap: no context
  }
  return carrier;
}

function attributesOf(request: McpRequestInfo): Attributes {
  const attributes: Attributes = { [attr.mcpMethod]: request.method };
  if (request.sessionId !== undefined) attributes[attr.mcpSessionId] = request.sessionId;
  if (request.requestId !== undefined) attributes[attr.jsonRpcRequestId] = String(request.requestId);
  const target = typeof request.target === 'string' && namePattern.test(request.target) ? request.target : undefined;
  if (request.method === 'tools/call') {
    attributes[attr.operationName] = executeTool;
    if (target !== undefined) attributes[attr.toolName] = target;
  }
  return attributes;
}

function spanName(request: McpRequestInfo): string {
  const target = typeof request.target === 'string' && namePattern.test(request.target) ? request.target : undefined;
  return target === undefined ? request.method : `${request.method} ${target}`;
}

/** A tool result with `isError: true` is a failed call to the caller, though not a protocol error. */
function isErrorResult(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as { isError?: unknown }).isError === true;
}

async function inSpan<T>(parent: Context, name: string, kind: SpanKind, attributes: Attributes, run: (active: Context) => Promise<T>, tracerProvider: TracerProvider | undefined): Promise<T> {
  const tracer = (tracerProvider ?? trace.getTracerProvider()).getTracer(instrumentName);
  const span = tracer.startSpan(name, { kind, attributes }, parent);
  const active = trace.setSpan(parent, span);
  try {
    const result = await context.with(active, () => run(active));
    if (isErrorResult(result)) {
      span.setAttribute(attr.errorType, 'tool_error');
      span.setStatus({ code: SpanStatusCode.ERROR, message: 'tool_error' });
    }
    return result;
  } catch (error) {
    // The error's message may quote an upstream's text: only its kind is recorded.
    const code = typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'number' ? String((error as { code: number }).code) : 'error';
    span.setAttribute(attr.errorType, code);
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw error;
  } finally {
    span.end();
  }
}

/**
 * MCP telemetry on OpenTelemetry: server spans continuing a client's `traceparent` from `_meta`, client
 * spans for upstream requests with their context put in the upstream request's `_meta`. Attributes
 * follow the MCP semantic conventions (`mcp.method.name`, `mcp.session.id`, `jsonrpc.request.id`).
 */
export function mcpTelemetry(tracerProvider?: TracerProvider): McpTelemetry {
  return {
    serverRequest(request, handle) {
      const parent = propagation.extract(context.active(), carrierOf(request.meta), getter);
      return inSpan(parent, spanName(request), SpanKind.SERVER, attributesOf(request), () => handle(), tracerProvider);
    },
    upstreamRequest(request, send) {
      return inSpan(context.active(), spanName(request), SpanKind.CLIENT, attributesOf(request), (active) => {
        const meta: Record<string, string> = {};
        propagation.inject(active, meta);
        return send(meta);
      }, tracerProvider);
    },
  };
}

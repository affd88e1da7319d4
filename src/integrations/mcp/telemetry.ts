import type { InvokeOptions, InvokeOutcome } from '../../stream/types';

/**
 * What the MCP proxy and gateway ask of telemetry, so that they import no OpenTelemetry code: the
 * CLI hands them an implementation (agent-tool-capabilities/otel's `mcpTelemetry`) only with `--otel`.
 */
export interface McpTelemetry {
  /**
   * Runs the handling of one client request inside a server span, continuing the W3C trace context
   * found in the request's `params._meta` (`traceparent`, `tracestate`) when there is one.
   */
  serverRequest<T>(request: McpRequestInfo, handle: () => Promise<T>): Promise<T>;
  /**
   * Runs one request to an upstream inside a client span; `send` gets the `_meta` entries that carry
   * that span's context upstream.
   */
  upstreamRequest<T>(request: McpRequestInfo, send: (meta: Readonly<Record<string, string>>) => Promise<T>): Promise<T>;
}

export interface McpRequestInfo {
  readonly method: string;
  /** A tool or prompt name as the client sent it (used only when it is a well-formed name). */
  readonly target?: unknown;
  /** The request's `params._meta` as the client sent it (hostile: only two string entries are read). */
  readonly meta?: unknown;
  readonly sessionId?: string;
  readonly requestId?: string | number;
}

/** No telemetry: runs what it is given. */
export const noTelemetry: McpTelemetry = {
  serverRequest: (_request, handle) => handle(),
  upstreamRequest: (_request, send) => send({}),
};

/**
 * How the gateway runs a call for a grant (default `ledger.invokeAsGrant`); with `--otel`, the
 * same call inside the ledger's `execute_tool` span (agent-tool-capabilities/otel).
 */
export type GrantInvoke = <Result>(grantId: string, tool: string, args: unknown, options?: InvokeOptions) => Promise<InvokeOutcome<Result>>;

import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { InvokeOutcome } from '../../stream/types';
import { rejectionResult, withCallId } from './callResults';
import { UpstreamToolError } from './upstreamTools';

/** A client's tool name fit for a log line: a name as MCP allows it, or the ledger's placeholder. */
export function toolLabel(name: unknown): string {
  return typeof name === 'string' && /^[A-Za-z0-9_.-]{1,128}$/.test(name) ? name : '(invalid-name)';
}

/**
 * What a client gets for a ledger outcome of a forwarded `tools/call` (the proxy and the gateway
 * alike): a rejection as an `isError` result with its reason, a completion or an upstream `isError`
 * result with the call id added, any other failure as a JSON-RPC error that names no argument.
 * `report` gets one line per decision (never a token or an argument value).
 */
export function toolCallResult(outcome: InvokeOutcome<CallToolResult>, name: unknown, cancelled: boolean, report: (line: string) => void): CallToolResult {
  const tool = toolLabel(name);
  if (outcome.status === 'rejected') {
    report(`${tool} rejected ${outcome.reason} (${outcome.callId})`);
    return rejectionResult(outcome);
  }
  if (outcome.status === 'completed') {
    report(`${tool} admitted, completed (${outcome.callId})`);
    return withCallId(outcome.value, outcome.callId);
  }
  const error = outcome.error;
  if (error instanceof UpstreamToolError) {
    report(`${tool} admitted, failed: isError result (${outcome.callId})`);
    return withCallId(error.result, outcome.callId);
  }
  report(`${tool} admitted, failed: ${cancelled ? 'cancelled by the client' : error instanceof McpError ? `upstream error ${error.code}` : 'upstream call failed'} (${outcome.callId})`);
  if (error instanceof McpError) throw new McpError(error.code, error.message.replace(/^MCP error -?\d+: /, ''), error.data);
  throw new McpError(ErrorCode.InternalError, `the upstream call failed (${outcome.callId})`);
}

import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { InvokeOutcome } from '../../stream/types';

type Rejected = Extract<InvokeOutcome, { status: 'rejected' }>;

/** A ledger rejection as MCP tool result: the client (and its model) sees why; the server never saw the call. */
export function rejectionResult(outcome: Rejected): CallToolResult {
  return {
    content: [{ type: 'text', text: `rejected: ${outcome.reason}: ${outcome.message}` }],
    isError: true,
    _meta: { 'atc/reason': outcome.reason, 'atc/callId': outcome.callId, ...(outcome.retryAfterMs !== undefined ? { 'atc/retryAfterMs': outcome.retryAfterMs } : {}) },
  };
}

/** A tool the proxy refused to register (e.g. its schema changed since the log registered it). */
export function refusedToolResult(tool: string, why: string): CallToolResult {
  return {
    content: [{ type: 'text', text: `refused: ${why}` }],
    isError: true,
    _meta: { 'atc/reason': 'tool_refused', 'atc/tool': tool },
  };
}

/** Adds the ledger's call id to a result's `_meta` (keeping whatever the server put there). */
export function withCallId(result: CallToolResult, callId: string): CallToolResult {
  return { ...result, _meta: { ...(result._meta ?? {}), 'atc/callId': callId } };
}

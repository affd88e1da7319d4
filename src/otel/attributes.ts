/**
 * Attribute and instrument names. The `gen_ai.*` and `mcp.*` names are OpenTelemetry's semantic
 * conventions (GenAI and MCP); `atc.*` are ours and tie a span to one event of the log.
 */
export const attr = {
  operationName: 'gen_ai.operation.name',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  errorType: 'error.type',
  grantId: 'atc.grant.id',
  decision: 'atc.decision',
  reason: 'atc.reason',
  outcome: 'atc.outcome',
  eventSeq: 'atc.event.seq',
  eventHash: 'atc.event.hash',
  settlementSeq: 'atc.settlement.seq',
  settlementHash: 'atc.settlement.hash',
  budgetDimension: 'atc.budget.dimension',
  mcpMethod: 'mcp.method.name',
  mcpSessionId: 'mcp.session.id',
  jsonRpcRequestId: 'jsonrpc.request.id',
} as const;

export const executeTool = 'execute_tool';

export const instrumentName = 'agent-tool-capabilities';

export const metricNames = {
  decisions: 'atc.decisions',
  callDuration: 'atc.call.duration',
  budgetUsed: 'atc.budget.used',
  budgetLimit: 'atc.budget.limit',
} as const;

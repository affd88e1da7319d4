// agent-tool-capabilities/mcp: MCP integrations (the official @modelcontextprotocol/sdk), kept out of the root entry.
export { ledgerMcpTools, type LedgerMcpTools, type LedgerMcpOptions, type LedgerToolConfig, type McpToolContext, type McpRequestExtra } from './middleware';
export { startProxy, ProxyStartError, type ProxyStartOptions, type StartedProxy, type GrantSource } from './startProxy';
export { createProxyServer, type ProxyServerOptions } from './proxyServer';
export { parsePolicy, policyIssueOptions, checkPolicyTools, PolicyError, type Policy } from './policy';
// Policy tooling (docs/policies.md): the lint behind `atc policy check`, and the log re-decision behind `atc policy diff`.
export { checkPolicy, type PolicyProblem, type PolicyProblemCode, type PolicyTool, type CheckPolicyOptions } from '../../policy/checkPolicy';
export { diffPolicy, type PolicyDiff, type DecisionChange, type OpenRule } from '../../policy/policyDiff';
export { templateProblem, expandTemplate, templateResources, type TemplateResolvers } from './resourceTemplates';
export { rejectionResult } from './callResults';
export type { UpstreamTarget } from './upstream';

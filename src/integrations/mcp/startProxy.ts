import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { sha256Hex } from '../../domain/chain';
import { shardGet } from '../../domain/shardedMap';
import type { ResourceTemplates } from '../../domain/events';
import type { Ledger } from '../../stream/types';
import { grantTemplates } from './grantTemplates';
import { checkPolicyTools, policyIssueOptions, registeredSchemas, type Policy } from './policy';
import { checkPolicyPaths } from './policyPaths';
import { createProxyServer } from './proxyServer';
import { ResourceMapping } from './resourceMapping';
import { templateCoverageProblem } from './templateCoverage';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { toolListWatch } from './relay/toolList';
import type { McpTelemetry } from './telemetry';
import { relayedClientCapabilities } from './relay/upstreamRequests';
import { connectUpstream, listUpstreamTools, type UpstreamTarget } from './upstream';
import { registerUpstreamTools, type LiveToolSet, type UpstreamToolSet } from './upstreamTools';

export type GrantSource = { readonly policy: Policy } | { readonly token: string };

export interface ProxyStartOptions {
  readonly ledger: Ledger;
  readonly upstream: UpstreamTarget;
  readonly grant: GrantSource;
  readonly version: string;
  readonly report?: (line: string) => void;
  readonly upstreamTimeoutMs?: number;
  readonly clock?: () => number;
  /** Spans for each call and its upstream request (`atc proxy --otel`); default none. */
  readonly telemetry?: McpTelemetry;
  /** Who is recorded as `by` when the client answers an approval question (`--approver`); default `mcp-client`. */
  readonly approver?: string;
}

export interface StartedProxy {
  readonly server: Server;
  readonly upstream: Client;
  readonly grantId: string;
  readonly tools: UpstreamToolSet;
  /** The token, when the proxy issued the grant itself (from a policy). */
  readonly issuedToken?: string;
}

export class ProxyStartError extends Error {
  override readonly name = 'ProxyStartError';
}

/** Connects the upstream, lists its tools, and registers each with the ledger. */
export async function attachUpstream(ledger: Ledger, target: UpstreamTarget, version: string, mapping: ResourceMapping, timeoutMs?: number, report?: (line: string) => void, capabilities: ClientCapabilities = {}, telemetry?: McpTelemetry): Promise<{ client: Client; tools: LiveToolSet }> {
  const client = await connectUpstream(target, version, report, capabilities);
  try {
    const listed = await listUpstreamTools(client);
    const tools = await registerUpstreamTools(ledger, client, listed, mapping, { ...(timeoutMs !== undefined ? { timeoutMs } : {}), ...(telemetry !== undefined ? { telemetry } : {}) });
    return { client, tools };
  } catch (error) {
    await client.close().catch(() => undefined);
    throw error;
  }
}

/**
 * Starts a proxy: upstream attached, the grant issued from the policy or found for the token, and
 * the resource templates the grant recorded put in use. The returned server is not connected yet.
 */
export async function startProxy(options: ProxyStartOptions): Promise<StartedProxy> {
  const { ledger } = options;
  const mapping = new ResourceMapping();
  const { client, tools } = await attachUpstream(ledger, options.upstream, options.version, mapping, options.upstreamTimeoutMs, options.report, relayedClientCapabilities, options.telemetry);
  try {
    let token: string;
    let grantId: string;
    let issuedToken: string | undefined;
    if ('policy' in options.grant) {
      checkPolicyPaths(options.grant.policy);
      checkPolicyTools(options.grant.policy, registeredSchemas(ledger));
      const { tools: granted, scopes, resources } = options.grant.policy;
      const uncovered = templateCoverageProblem(granted, scopes ?? [], resources ?? {});
      if (uncovered !== undefined) throw new ProxyStartError(uncovered); // before anything is issued
      ({ token, grantId } = await ledger.issue(policyIssueOptions(options.grant.policy, (options.clock ?? Date.now)())));
      issuedToken = token;
    } else {
      token = options.grant.token;
      const found = shardGet(ledger.state().tokens, sha256Hex(token));
      if (found === undefined) throw new ProxyStartError('the token matches no grant in this ledger');
      grantId = found;
    }
    const recorded = grantTemplates(ledger.events(), grantId);
    const uncovered = grantCoverageProblem(ledger, grantId, recorded.templates);
    if (uncovered !== undefined) throw new ProxyStartError(`${uncovered}, in the policy the grant is issued from`);
    mapping.use(recorded.templates, recorded.fsBase);
    const report = options.report ?? (() => undefined);
    const watch = toolListWatch({
      ledger,
      upstream: client,
      tools,
      mapping,
      forward: { ...(options.upstreamTimeoutMs !== undefined ? { timeoutMs: options.upstreamTimeoutMs } : {}), ...(options.telemetry !== undefined ? { telemetry: options.telemetry } : {}) },
      changed: async (change) => {
        for (const name of change.hidden) report(`tool ${name} hidden and refused: ${tools.refused.get(name) ?? ''}`);
        report(`the upstream's tools changed: ${change.added.length} registered, ${change.hidden.length} hidden, ${change.restored.length} restored`);
        await server.sendToolListChanged().catch(() => undefined);
      },
      failed: (why) => report(`re-listing the upstream's tools failed: ${why}`),
    });
    const server = createProxyServer({ ledger, token, grantId, ...(options.approver !== undefined ? { approver: options.approver } : {}), upstream: client, tools, version: options.version, report, onToolsChanged: watch.notify, ...(options.telemetry !== undefined ? { telemetry: options.telemetry } : {}) });
    return { server, upstream: client, grantId, tools, ...(issuedToken !== undefined ? { issuedToken } : {}) };
  } catch (error) {
    await client.close().catch(() => undefined);
    throw error;
  }
}

/** The grant's tools against its templates and the scopes along its chain (a child's root may scope files). */
function grantCoverageProblem(ledger: Ledger, grantId: string, templates: ResourceTemplates): string | undefined {
  const grants = ledger.state().grants;
  const grant = shardGet(grants, grantId);
  if (grant === undefined) return undefined;
  const chain = [grant, ...(grant.ancestors ?? []).map((id) => shardGet(grants, id))];
  const scopes = chain.flatMap((g) => g?.scope.resources ?? []);
  return templateCoverageProblem(grant.scope.tools, scopes, templates);
}

import { createLedger } from '../createLedger';
import type { JsonObject } from '../domain/json';
import { registeredSchemas } from '../integrations/mcp/policy';
import type { UpstreamConfig } from '../integrations/gateway/config';
import type { PolicyTool } from '../policy/checkPolicy';
import { packageVersion } from './ledgerFile';

/** The tools a gateway would register, by gateway name, and those it would refuse (name → why). */
export interface GatewayTools {
  readonly tools: readonly PolicyTool[];
  readonly refused: ReadonlyMap<string, string>;
  /** toolNames "plain": a name two upstreams share (the gateway refuses to start). */
  readonly shared?: string;
}

/**
 * Starts (or reaches) each upstream of a gateway config as `atc gateway` does (same environment
 * rule), lists its tools, closes it, names the tools as the gateway would, and registers them in a
 * scratch in-memory ledger so that a tool the gateway would refuse (a schema the ledger does not
 * accept, a name listed twice) is refused here too. Throws naming the upstream that failed.
 */
export async function gatewayTools(upstreams: ReadonlyMap<string, UpstreamConfig>, toolNames: 'prefixed' | 'plain'): Promise<GatewayTools> {
  const { connectUpstream, listUpstreamTools } = await import('../integrations/mcp/upstream');
  const { target } = await import('../integrations/gateway/upstreams');
  const listed: { readonly upstream: string; readonly name: string; readonly inputSchema: JsonObject }[] = [];
  for (const [name, upstream] of upstreams) {
    let client;
    try {
      client = await connectUpstream(target(upstream), packageVersion());
      for (const tool of await listUpstreamTools(client)) listed.push({ upstream: name, name: toolNames === 'plain' ? tool.name : `${name}__${tool.name}`, inputSchema: tool.inputSchema as JsonObject });
    } catch (error) {
      throw new Error(`upstream ${name} could not be started or listed: ${(error as Error).message}`);
    } finally {
      await client?.close().catch(() => undefined);
    }
  }
  const shared = toolNames === 'plain' ? sharedName(listed) : undefined;
  const scratch = createLedger();
  const refused = new Map<string, string>();
  try {
    const seen = new Set<string>();
    for (const tool of listed) {
      if (seen.has(tool.name)) {
        refused.set(tool.name, 'the upstream lists this name twice');
        continue;
      }
      seen.add(tool.name);
      try {
        await scratch.registerTool({ name: tool.name, inputSchema: tool.inputSchema, run: () => undefined });
      } catch (error) {
        refused.set(tool.name, (error as Error).message);
      }
    }
    const registered = registeredSchemas(scratch);
    for (const name of refused.keys()) registered.delete(name);
    return { tools: Array.from(registered, ([name, inputSchema]) => ({ name, inputSchema })), refused, ...(shared !== undefined ? { shared } : {}) };
  } finally {
    await scratch.close();
  }
}

function sharedName(listed: readonly { readonly upstream: string; readonly name: string }[]): string | undefined {
  const owner = new Map<string, string>();
  for (const { upstream, name } of listed) {
    const other = owner.get(name);
    if (other !== undefined && other !== upstream) return name;
    owner.set(name, upstream);
  }
  return undefined;
}

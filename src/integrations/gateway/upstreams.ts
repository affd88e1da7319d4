import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Ledger } from '../../stream/types';
import { connectUpstream, listUpstreamTools, type UpstreamTarget } from '../mcp/upstream';
import { forwardToolCall, registerRoutedTools, type ResourceMapper, type UpstreamToolSet } from '../mcp/upstreamTools';
import { currentSessionCall } from './callContext';
import type { GatewayConfig, UpstreamConfig } from './config';
import { StdioSupervisor, systemSetTimer, type SetTimer } from './stdioSupervisor';

export interface UpstreamsOptions {
  readonly version: string;
  readonly setTimer?: SetTimer;
  readonly report?: (line: string) => void;
  /** Per upstream request (progress resets it); the SDK's default is 60 s. */
  readonly upstreamTimeoutMs?: number;
}

export class GatewayStartError extends Error {
  override readonly name = 'GatewayStartError';
}

const healthPingMs = 2_000;
const healthCacheMs = 1_000;

/**
 * The gateway's upstreams: each stdio server started once and supervised, each HTTP server listed
 * through one control client (kept for health checks) and then reached through one client per agent
 * session. Every tool is registered with the ledger under its gateway name; its `run` finds the
 * client of the session whose call it is, so no call goes out without a session behind it.
 */
export class GatewayUpstreams {
  private readonly supervisors = new Map<string, StdioSupervisor>();
  private readonly controls = new Map<string, Client>();
  private health: { readonly at: number; readonly up: Promise<boolean> } | undefined;
  tools: UpstreamToolSet = { registered: new Map(), refused: new Map() };

  private constructor(
    private readonly config: Pick<GatewayConfig, 'upstreams' | 'toolNames'>,
    private readonly options: UpstreamsOptions,
  ) {}

  static async start(ledger: Ledger, config: Pick<GatewayConfig, 'upstreams' | 'toolNames'>, mapper: ResourceMapper, options: UpstreamsOptions): Promise<GatewayUpstreams> {
    const upstreams = new GatewayUpstreams(config, options);
    try {
      await upstreams.attach(ledger, mapper);
      return upstreams;
    } catch (error) {
      await upstreams.close();
      throw error;
    }
  }

  /** A new client of an HTTP upstream, for one agent session (the caller closes it). */
  connectHttp(name: string): Promise<Client> {
    const upstream = this.config.upstreams.get(name);
    if (upstream?.kind !== 'http') return Promise.reject(new Error('not an HTTP upstream'));
    return connectUpstream(target(upstream), this.options.version);
  }

  /** Every stdio upstream running and every HTTP upstream answering a ping (cached for a second). */
  healthy(now: number = Date.now()): Promise<boolean> {
    if (this.health !== undefined && now - this.health.at < healthCacheMs) return this.health.up;
    const up = (async () => {
      for (const supervisor of this.supervisors.values()) if (!supervisor.up()) return false;
      const pings = Array.from(this.controls.values(), (client) => client.ping({ timeout: healthPingMs }).then(() => true, () => false));
      return (await Promise.all(pings)).every(Boolean);
    })();
    this.health = { at: now, up };
    return up;
  }

  async close(): Promise<void> {
    await Promise.all(Array.from(this.supervisors.values(), (s) => s.close()));
    await Promise.all(Array.from(this.controls.values(), (c) => c.close().catch(() => undefined)));
  }

  private async attach(ledger: Ledger, mapper: ResourceMapper): Promise<void> {
    const listed: { readonly upstream: string; readonly tool: Tool }[] = [];
    for (const [name, upstream] of this.config.upstreams) {
      let client: Client;
      try {
        if (upstream.kind === 'stdio') {
          const supervisor = new StdioSupervisor(() => connectUpstream(target(upstream), this.options.version), this.options.setTimer ?? systemSetTimer, (line) => this.options.report?.(`upstream ${name}: ${line}`));
          this.supervisors.set(name, supervisor);
          client = await supervisor.start();
        } else {
          client = await connectUpstream(target(upstream), this.options.version);
          this.controls.set(name, client);
        }
        for (const tool of await listUpstreamTools(client)) listed.push({ upstream: name, tool });
      } catch (error) {
        throw new GatewayStartError(`upstream ${name} could not be started or listed: ${(error as Error).message}`);
      }
    }
    const owners = new Map<Tool, string>(listed.map((l) => [l.tool, l.upstream]));
    if (this.config.toolNames === 'plain') refuseSharedNames(listed);
    const forwardOptions = this.options.upstreamTimeoutMs !== undefined ? { timeoutMs: this.options.upstreamTimeoutMs } : {};
    this.tools = await registerRoutedTools(ledger, listed.map((l) => l.tool), mapper, {
      nameOf: (tool) => (this.config.toolNames === 'plain' ? tool.name : `${owners.get(tool) as string}__${tool.name}`),
      run: async (tool, args, signal) => {
        const upstream = owners.get(tool) as string;
        const call = currentSessionCall();
        if (call === undefined) throw new Error('a gateway tool runs only for a session');
        const client = this.supervisors.get(upstream)?.client() ?? (this.controls.has(upstream) ? await call.httpClient(upstream) : undefined);
        if (client === undefined) throw new Error(`upstream ${upstream} is down`);
        return forwardToolCall(client, tool.name, args, signal, forwardOptions, call.relay);
      },
    });
  }
}

function refuseSharedNames(listed: readonly { readonly upstream: string; readonly tool: Tool }[]): void {
  const seen = new Map<string, string>();
  for (const { upstream, tool } of listed) {
    const other = seen.get(tool.name);
    if (other !== undefined && other !== upstream) throw new GatewayStartError(`toolNames "plain": upstreams ${other} and ${upstream} both list a tool named ${JSON.stringify(tool.name).slice(0, 140)}; use "prefixed"`);
    seen.set(tool.name, upstream);
  }
}

/** A stdio child gets the SDK's default environment (HOME, PATH, …) plus the config's, nothing of the gateway's own. */
export function target(upstream: UpstreamConfig): UpstreamTarget {
  return upstream.kind === 'http' ? { kind: 'http', url: upstream.url } : { kind: 'stdio', command: upstream.command, args: upstream.args, env: { ...getDefaultEnvironment(), ...upstream.env } };
}

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema, type ServerCapabilities, type ServerNotification, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { JsonObject } from '../../domain/json';
import type { Ledger } from '../../stream/types';
import { CallRouter } from '../mcp/relay/callRouter';
import { toolListWatch, type ToolListChange } from '../mcp/relay/toolList';
import { relayUpstreamNotifications } from '../mcp/relay/upstreamNotifications';
import { relayedClientCapabilities, relayUpstreamRequests } from '../mcp/relay/upstreamRequests';
import type { McpTelemetry } from '../mcp/telemetry';
import { connectUpstream, listUpstreamTools, type UpstreamTarget } from '../mcp/upstream';
import { attachRoutedTool, forwardToolCall, registerRoutedTools, type LiveToolSet, type ResourceMapper, type UpstreamToolSet } from '../mcp/upstreamTools';
import { currentSessionCall, type UpstreamConnection } from './callContext';
import type { GatewayConfig, UpstreamConfig } from './config';
import { routesMax } from './relayRoutes';
import type { GatewaySession } from './session';
import type { SessionRelayUpstreams } from './sessionRelay';
import { SharedSubscriptions } from './sharedSubscriptions';
import { StdioSupervisor, systemSetTimer, type SetTimer } from './stdioSupervisor';

export interface UpstreamsOptions {
  readonly version: string;
  readonly setTimer?: SetTimer;
  readonly report?: (line: string) => void;
  /** Per upstream request (progress resets it); the SDK's default is 60 s. */
  readonly upstreamTimeoutMs?: number;
  /** A client span per upstream call, its context sent upstream in `_meta` (`--otel`). */
  readonly telemetry?: McpTelemetry;
  /** A shared (stdio) upstream's notification tied to no call: to the sessions it concerns. */
  readonly broadcast?: (upstream: string, notification: ServerNotification) => Promise<void>;
  /** An upstream's tools changed (a re-list after `tools/list_changed`): the sessions are told. */
  readonly toolsChanged?: (upstream: string, change: ToolListChange) => void;
}

export class GatewayStartError extends Error {
  override readonly name = 'GatewayStartError';
}

const healthPingMs = 2_000;
const healthCacheMs = 1_000;

/**
 * The gateway's upstreams: each stdio server started once, supervised and shared by every session
 * (one call router for its one connection); each HTTP server listed through one control client
 * (kept for health checks and tool-list changes) and then reached through one connection per agent
 * session. Every tool is registered with the ledger under its gateway name; its `run` finds the
 * connection of the session whose call it is and enters the call in that connection's router, so
 * what the upstream asks during the call reaches that session and no other.
 */
export class GatewayUpstreams implements SessionRelayUpstreams {
  private readonly supervisors = new Map<string, StdioSupervisor>();
  private readonly routers = new Map<string, CallRouter>();
  private readonly controls = new Map<string, Client>();
  private readonly perUpstream = new Map<string, LiveToolSet>();
  private readonly watches = new Map<string, () => void>();
  private readonly subscriptions = new SharedSubscriptions();
  private health: { readonly at: number; readonly up: Promise<boolean> } | undefined;
  tools: UpstreamToolSet = { registered: new Map(), refused: new Map() };
  readonly names: readonly string[];
  readonly toolNames: 'prefixed' | 'plain';

  private constructor(
    private readonly config: Pick<GatewayConfig, 'upstreams' | 'toolNames'>,
    private readonly options: UpstreamsOptions,
  ) {
    this.names = Array.from(config.upstreams.keys());
    this.toolNames = config.toolNames;
  }

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

  /** A new connection to an HTTP upstream for one agent session, relaying to it (the session closes it). */
  async connectHttp(name: string, session: GatewaySession): Promise<UpstreamConnection> {
    const upstream = this.config.upstreams.get(name);
    if (upstream?.kind !== 'http') throw new Error('not an HTTP upstream');
    const client = await connectUpstream(target(upstream), this.options.version, this.options.report, relayedClientCapabilities);
    const router = new CallRouter();
    this.relay(name, client, router, (notification) => session.server.notification(notification));
    return { client, router };
  }

  shared(name: string): boolean {
    return this.supervisors.has(name);
  }

  capabilities(name: string): ServerCapabilities {
    const client = this.supervisors.get(name)?.client() ?? this.controls.get(name);
    return client?.getServerCapabilities() ?? {};
  }

  async connection(name: string, session: GatewaySession): Promise<UpstreamConnection> {
    const supervisor = this.supervisors.get(name);
    if (supervisor === undefined) return session.httpConnection(name);
    const client = supervisor.client();
    if (client === undefined) throw new Error(`upstream ${name} is down`);
    return { client, router: this.routers.get(name) as CallRouter };
  }

  async subscribe(name: string, session: GatewaySession, uri: string, signal: AbortSignal): Promise<void> {
    const client = (await this.connection(name, session)).client;
    const recorded = session.routes.subscribe(name, uri);
    if (recorded === 'full') throw new McpError(ErrorCode.InvalidRequest, `this session holds ${routesMax} subscriptions`);
    if (recorded === 'held') return;
    if (!this.shared(name) || this.subscriptions.add(name, uri)) await client.subscribeResource({ uri }, { signal });
  }

  async unsubscribe(name: string, session: GatewaySession, uri: string, signal: AbortSignal): Promise<void> {
    const client = (await this.connection(name, session)).client;
    if (!session.routes.unsubscribe(name, uri)) return;
    if (!this.shared(name) || this.subscriptions.remove(name, uri)) await client.unsubscribeResource({ uri }, { signal });
  }

  /** A closing session's subscriptions on shared upstreams: the last holder's end is sent upstream. */
  releaseSubscriptions(session: GatewaySession): void {
    for (const [name, uri] of session.routes.releaseAll()) {
      if (this.shared(name) && this.subscriptions.remove(name, uri)) void this.supervisors.get(name)?.client()?.unsubscribeResource({ uri }).catch(() => undefined);
    }
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

  /** The upstream's requests and notifications, relayed by this connection's router; its list changes re-list it. */
  private relay(name: string, client: Client, router: CallRouter, audience: (notification: ServerNotification) => Promise<void>): void {
    relayUpstreamRequests({ upstream: client, router, report: (line) => this.options.report?.(`upstream ${name}: ${line}`) });
    relayUpstreamNotifications({ upstream: client, router, audience, onToolsChanged: () => this.watches.get(name)?.() });
  }

  private async attach(ledger: Ledger, mapper: ResourceMapper): Promise<void> {
    const listed = new Map<string, Tool[]>();
    for (const [name, upstream] of this.config.upstreams) {
      try {
        listed.set(name, await listUpstreamTools(await this.start(name, upstream)));
      } catch (error) {
        throw new GatewayStartError(`upstream ${name} could not be started or listed: ${(error as Error).message}`);
      }
    }
    if (this.config.toolNames === 'plain') refuseSharedNames(listed);
    const nameOf = (upstream: string, tool: Tool): string => (this.config.toolNames === 'plain' ? tool.name : `${upstream}__${tool.name}`);
    for (const [name, tools] of listed) {
      const run = (tool: Tool, args: JsonObject, signal: AbortSignal) => this.run(name, tool, args, signal);
      this.perUpstream.set(name, await registerRoutedTools(ledger, tools, mapper, { nameOf: (tool) => nameOf(name, tool), run }));
      const watch = toolListWatch({
        tools: this.perUpstream.get(name) as LiveToolSet,
        list: () => this.listOf(name),
        nameOf: (tool) => nameOf(name, tool),
        attach: (tool, gatewayName) => (this.owner(gatewayName, name) ? attachRoutedTool(ledger, tool, gatewayName, mapper, { run }) : Promise.resolve('another upstream lists this name (toolNames "plain")')),
        changed: (change) => {
          this.merge();
          this.options.toolsChanged?.(name, change);
        },
        failed: (why) => this.options.report?.(`upstream ${name}: re-listing its tools failed: ${why}`),
      });
      this.watches.set(name, watch.notify);
    }
    this.merge();
  }

  /** Starts a stdio upstream (relayed on every (re)start) or connects an HTTP upstream's control client. */
  private async start(name: string, upstream: UpstreamConfig): Promise<Client> {
    if (upstream.kind === 'http') {
      const client = await connectUpstream(target(upstream), this.options.version);
      this.controls.set(name, client);
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.watches.get(name)?.());
      return client;
    }
    const router = new CallRouter();
    this.routers.set(name, router);
    const connect = async (): Promise<Client> => {
      const client = await connectUpstream(target(upstream), this.options.version, this.options.report, relayedClientCapabilities);
      this.relay(name, client, router, (notification) => this.options.broadcast?.(name, notification) ?? Promise.resolve());
      return client;
    };
    const supervisor = new StdioSupervisor(connect, this.options.setTimer ?? systemSetTimer, (line) => this.options.report?.(`upstream ${name}: ${line}`));
    this.supervisors.set(name, supervisor);
    return supervisor.start();
  }

  private async listOf(name: string): Promise<Tool[]> {
    const client = this.supervisors.get(name)?.client() ?? this.controls.get(name);
    if (client === undefined) throw new Error('the upstream is down');
    return listUpstreamTools(client);
  }

  /** True when no other upstream already has a tool under this gateway name. */
  private owner(gatewayName: string, upstream: string): boolean {
    for (const [other, set] of this.perUpstream) if (other !== upstream && set.attached.has(gatewayName)) return false;
    return true;
  }

  /** One call forwarded to the upstream through the calling session's connection, entered in its router meanwhile. */
  private async run(upstream: string, tool: Tool, args: JsonObject, signal: AbortSignal) {
    const call = currentSessionCall();
    if (call === undefined) throw new Error('a gateway tool runs only for a session');
    const connection = this.supervisors.has(upstream) ? this.sharedConnection(upstream) : await call.httpConnection(upstream);
    const leave = connection.router.enter(call.link);
    try {
      const forward = { ...(this.options.upstreamTimeoutMs !== undefined ? { timeoutMs: this.options.upstreamTimeoutMs } : {}), ...(this.options.telemetry !== undefined ? { telemetry: this.options.telemetry } : {}) };
      return await forwardToolCall(connection.client, tool.name, args, signal, forward, call.relay);
    } finally {
      leave();
    }
  }

  private sharedConnection(upstream: string): UpstreamConnection {
    const client = this.supervisors.get(upstream)?.client();
    if (client === undefined) throw new Error(`upstream ${upstream} is down`);
    return { client, router: this.routers.get(upstream) as CallRouter };
  }

  /** The sessions' view: every upstream's registered and refused tools under gateway names. */
  private merge(): void {
    const registered = new Map<string, Tool>();
    const refused = new Map<string, string>();
    for (const set of this.perUpstream.values()) {
      for (const [name, tool] of set.registered) registered.set(name, tool);
      for (const [name, why] of set.refused) if (!registered.has(name)) refused.set(name, why);
    }
    this.tools = { registered, refused };
  }
}

function refuseSharedNames(listed: ReadonlyMap<string, readonly Tool[]>): void {
  const seen = new Map<string, string>();
  for (const [upstream, tools] of listed) {
    for (const tool of tools) {
      const other = seen.get(tool.name);
      if (other !== undefined && other !== upstream) throw new GatewayStartError(`toolNames "plain": upstreams ${other} and ${upstream} both list a tool named ${JSON.stringify(tool.name).slice(0, 140)}; use "prefixed"`);
      seen.set(tool.name, upstream);
    }
  }
}

/** A stdio child gets the SDK's default environment (HOME, PATH, …) plus the config's, nothing of the gateway's own. */
export function target(upstream: UpstreamConfig): UpstreamTarget {
  return upstream.kind === 'http' ? { kind: 'http', url: upstream.url } : { kind: 'stdio', command: upstream.command, args: upstream.args, env: { ...getDefaultEnvironment(), ...upstream.env } };
}

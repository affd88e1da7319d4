import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode, McpError, PingRequestSchema, ResultSchema, type JSONRPCRequest, type ServerCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { relayedMethods } from '../mcp/relay/forwarding';
import { withoutAtcMeta } from '../mcp/relay/sanitize';
import type { UpstreamConnection } from './callContext';
import type { GatewaySession } from './session';

/** What the session relay needs of the gateway's upstreams. */
export interface SessionRelayUpstreams {
  /** Upstream names, in config order. */
  readonly names: readonly string[];
  readonly toolNames: 'prefixed' | 'plain';
  /** What the upstream offers (empty while it is down). */
  capabilities(upstream: string): ServerCapabilities;
  /** The shared connection (stdio) or the session's own (HTTP). */
  connection(upstream: string, session: GatewaySession): Promise<UpstreamConnection>;
  /** A shared upstream's subscriptions are counted over sessions (one session's unsubscribe ends no other's). */
  subscribe(upstream: string, session: GatewaySession, uri: string, signal: AbortSignal): Promise<void>;
  unsubscribe(upstream: string, session: GatewaySession, uri: string, signal: AbortSignal): Promise<void>;
  shared(upstream: string): boolean;
}

type Params = { readonly [key: string]: unknown };
type Capability = keyof ServerCapabilities;
type Listed = { readonly key: 'resources' | 'resourceTemplates' | 'prompts'; readonly capability: Capability };

const listed: { readonly [method: string]: Listed } = {
  'resources/list': { key: 'resources', capability: 'resources' },
  'resources/templates/list': { key: 'resourceTemplates', capability: 'resources' },
  'prompts/list': { key: 'prompts', capability: 'prompts' },
};
/** Pages read from one upstream for one list, and entries kept: the same bounds as for its tools. */
const listPagesMax = 100;
const listEntriesMax = 4_096;

/** The capabilities a session is offered besides tools: what at least one upstream offers. */
export function sessionCapabilities(upstreams: SessionRelayUpstreams): ServerCapabilities {
  const offered: ServerCapabilities = {};
  for (const name of upstreams.names) {
    const caps = upstreams.capabilities(name);
    if (caps.resources !== undefined) offered.resources = { ...offered.resources, ...(caps.resources.subscribe === true ? { subscribe: true } : {}), ...(caps.resources.listChanged === true ? { listChanged: true } : {}) };
    if (caps.prompts !== undefined) offered.prompts = { ...offered.prompts, ...(caps.prompts.listChanged === true ? { listChanged: true } : {}) };
    if (caps.completions !== undefined) offered.completions = {};
    if (caps.logging !== undefined) offered.logging = {};
  }
  return offered;
}

/**
 * Relays a session's requests other than tools to the upstreams that offer them: lists merged over
 * the upstreams (prompt and resource names under the gateway's naming rule; URIs as they are),
 * reads, subscriptions and completions routed to the upstream that listed the URI or prompt (or
 * whose template the URI matches, or the only one offering it), `logging/setLevel` to the
 * session's own connections (a shared stdio upstream keeps its level: one session may not change
 * what the others receive), `ping` to every upstream. Anything else is `method not found`.
 */
export function relaySessionRequests(server: Server, session: GatewaySession, upstreams: SessionRelayUpstreams): void {
  const ctx: RelayContext = { session, upstreams };
  const offering = (capability: Capability): string[] => upstreams.names.filter((n) => upstreams.capabilities(n)[capability] !== undefined);
  server.removeRequestHandler('ping');
  server.setRequestHandler(PingRequestSchema, async (_request, extra) => {
    await Promise.all(upstreams.names.map(async (name) => (await upstreams.connection(name, session)).client.ping({ signal: extra.signal })));
    return {};
  });
  server.fallbackRequestHandler = async (request: JSONRPCRequest, extra) => {
    const capability = relayedMethods[request.method];
    const owners = capability === undefined ? [] : offering(capability);
    if (capability === undefined || owners.length === 0) throw new McpError(ErrorCode.MethodNotFound, `method not found: ${request.method}`);
    const params: Params = request.params ?? {};
    const list = listed[request.method];
    if (list !== undefined) return mergedList(ctx, request.method, list, params, owners, extra.signal);
    if (request.method === 'logging/setLevel') return setLevel(ctx, params, owners, extra.signal);
    const target = routeOf(ctx, request.method, params, owners);
    if (request.method === 'resources/subscribe' || request.method === 'resources/unsubscribe') {
      const subscribe = request.method === 'resources/subscribe' ? upstreams.subscribe : upstreams.unsubscribe;
      await subscribe.call(upstreams, target.upstream, session, params.uri as string, extra.signal);
      return {};
    }
    const connection = await upstreams.connection(target.upstream, session);
    return withoutAtcMeta(await connection.client.request({ method: request.method, params: target.params }, ResultSchema, { signal: extra.signal }));
  };
}

interface RelayContext {
  readonly session: GatewaySession;
  readonly upstreams: SessionRelayUpstreams;
}

/** A prompt's or resource's name as sessions see it: `<upstream>__<name>` when names are prefixed. */
function outwardName(ctx: RelayContext, upstream: string, name: string): string {
  return ctx.upstreams.toolNames === 'prefixed' ? `${upstream}__${name}` : name;
}

/** One list merged over the upstreams offering it, each read whole; what it names is remembered for routing. */
async function mergedList(ctx: RelayContext, method: string, list: Listed, params: Params, owners: readonly string[], signal: AbortSignal): Promise<Record<string, unknown>> {
  if (params.cursor !== undefined) throw new McpError(ErrorCode.InvalidParams, 'invalid cursor: the gateway returns whole lists');
  const { routes } = ctx.session;
  const merged: unknown[] = [];
  for (const upstream of owners) {
    const entries = await listAll(await ctx.upstreams.connection(upstream, ctx.session), method, list.key, signal);
    if (list.key === 'resourceTemplates') routes.listedTemplates(upstream, entries.flatMap((e) => (typeof e.uriTemplate === 'string' ? [e.uriTemplate] : [])));
    for (const entry of entries) {
      if (list.key === 'resources' && typeof entry.uri === 'string') routes.listedUri(entry.uri, upstream);
      if (list.key === 'prompts' && typeof entry.name === 'string') routes.listedPrompt(outwardName(ctx, upstream, entry.name), upstream);
      merged.push(withoutAtcMeta(typeof entry.name === 'string' ? { ...entry, name: outwardName(ctx, upstream, entry.name) } : entry));
    }
  }
  return { [list.key]: merged };
}

/** The level goes to the session's own connections only: a shared upstream's level is every session's. */
async function setLevel(ctx: RelayContext, params: Params, owners: readonly string[], signal: AbortSignal): Promise<Record<string, unknown>> {
  const own = owners.filter((name) => !ctx.upstreams.shared(name));
  await Promise.all(own.map(async (name) => (await ctx.upstreams.connection(name, ctx.session)).client.request({ method: 'logging/setLevel', params }, ResultSchema, { signal })));
  return {};
}

/** The upstream a read, get, subscription or completion goes to, and the params as that upstream names things. */
function routeOf(ctx: RelayContext, method: string, params: Params, owners: readonly string[]): { readonly upstream: string; readonly params: Params } {
  const sole = owners.length === 1 ? owners[0] : undefined;
  const prompt = (name: unknown): { upstream: string; name: string } => {
    const found = typeof name === 'string' ? inwardPrompt(ctx, name, sole) : undefined;
    if (found === undefined || !owners.includes(found.upstream)) throw new McpError(ErrorCode.InvalidParams, 'unknown prompt (list the prompts first)');
    return found;
  };
  if (method === 'prompts/get') {
    const found = prompt(params.name);
    return { upstream: found.upstream, params: { ...params, name: found.name } };
  }
  const ref = params.ref as Params | undefined;
  if (method === 'completion/complete' && ref !== null && typeof ref === 'object' && ref.type === 'ref/prompt') {
    const found = prompt(ref.name);
    return { upstream: found.upstream, params: { ...params, ref: { ...ref, name: found.name } } };
  }
  const uri = method === 'completion/complete' ? ref?.uri : params.uri;
  const upstream = typeof uri === 'string' ? (ctx.session.routes.uriOwner(uri) ?? sole) : undefined;
  if (upstream === undefined || !owners.includes(upstream)) throw new McpError(ErrorCode.InvalidParams, 'unknown resource (list the resources or templates first)');
  return { upstream, params };
}

/** The upstream and its own name for a prompt name a session sent; undefined when it names none. */
function inwardPrompt(ctx: RelayContext, name: string, sole: string | undefined): { upstream: string; name: string } | undefined {
  if (ctx.upstreams.toolNames !== 'prefixed') {
    const upstream = ctx.session.routes.promptOwner(name) ?? sole;
    return upstream === undefined ? undefined : { upstream, name };
  }
  const at = name.indexOf('__');
  const upstream = at > 0 ? name.slice(0, at) : undefined;
  return upstream !== undefined && ctx.upstreams.names.includes(upstream) ? { upstream, name: name.slice(at + 2) } : undefined;
}

/** Every entry of an upstream's list, all pages (bounded); an entry that is not an object is left out. */
async function listAll(connection: UpstreamConnection, method: string, key: string, signal: AbortSignal): Promise<Params[]> {
  const entries: Params[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < listPagesMax; page++) {
    const result = await connection.client.request({ method, ...(cursor !== undefined ? { params: { cursor } } : {}) }, ResultSchema, { signal });
    const items = (result as Params)[key];
    if (Array.isArray(items)) for (const item of items) if (item !== null && typeof item === 'object' && !Array.isArray(item)) entries.push(item as Params);
    if (entries.length > listEntriesMax) throw new McpError(ErrorCode.InternalError, `an upstream lists more than ${listEntriesMax} entries`);
    cursor = typeof result.nextCursor === 'string' ? result.nextCursor : undefined;
    if (cursor === undefined) return entries;
  }
  throw new McpError(ErrorCode.InternalError, `an upstream's list has more than ${listPagesMax} pages`);
}

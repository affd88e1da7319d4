import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode, McpError, PingRequestSchema, ResultSchema, type JSONRPCRequest, type ServerCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { withoutAtcMeta } from './sanitize';

/** Requests relayed as they are, each only when the upstream offers its capability. */
export const relayedMethods: { readonly [method: string]: keyof ServerCapabilities } = {
  'resources/list': 'resources',
  'resources/templates/list': 'resources',
  'resources/read': 'resources',
  'resources/subscribe': 'resources',
  'resources/unsubscribe': 'resources',
  'prompts/list': 'prompts',
  'prompts/get': 'prompts',
  'completion/complete': 'completions',
  'logging/setLevel': 'logging',
};

/**
 * How prompt names look downstream. The proxy shows them as the upstream lists them; a gateway
 * aggregating several upstreams prefixes them as it does tool names (`<upstream>__<prompt>`).
 */
export interface PromptNaming {
  readonly outward: (upstreamName: string) => string;
  /** The upstream's name for a downstream name, or undefined when it is not one of this upstream's. */
  readonly inward: (downstreamName: string) => string | undefined;
}

export const plainPromptNames: PromptNaming = { outward: (name) => name, inward: (name) => name };

/** The capabilities to advertise downstream for what the upstream offers, besides `tools`. */
export function relayedServerCapabilities(upstream: ServerCapabilities): ServerCapabilities {
  const capabilities: ServerCapabilities = {};
  for (const key of ['resources', 'prompts', 'completions', 'logging'] as const) {
    if (upstream[key] !== undefined) Object.assign(capabilities, { [key]: upstream[key] });
  }
  return capabilities;
}

/**
 * Serves `ping` by pinging the upstream, and relays every method of `relayedMethods` the upstream
 * offers (any other is `method not found`), with prompt names mapped by `naming` both ways and
 * `atc/` `_meta` keys dropped from the results.
 */
export function relayDownstreamRequests(server: Server, upstream: Client, naming: PromptNaming = plainPromptNames): void {
  const offered = upstream.getServerCapabilities() ?? {};
  server.removeRequestHandler('ping');
  server.setRequestHandler(PingRequestSchema, async (_request, extra) => {
    await upstream.ping({ signal: extra.signal });
    return {};
  });
  server.fallbackRequestHandler = async (request: JSONRPCRequest, extra) => {
    const capability = relayedMethods[request.method];
    if (capability === undefined || offered[capability] === undefined) throw new McpError(ErrorCode.MethodNotFound, `method not found: ${request.method}`);
    const params = request.params === undefined ? undefined : inwardParams(request.method, request.params, naming);
    const result = await upstream.request({ method: request.method, ...(params !== undefined ? { params } : {}) }, ResultSchema, { signal: extra.signal });
    return withoutAtcMeta(request.method === 'prompts/list' ? outwardPrompts(result, naming) : result);
  };
}

type Params = { readonly [key: string]: unknown };

/** A downstream request's params with a prompt name put back as the upstream calls it. */
function inwardParams(method: string, params: Params, naming: PromptNaming): Params {
  if (method === 'prompts/get') return { ...params, name: inwardName(params.name, naming) };
  const ref = params.ref as Params | undefined;
  if (method === 'completion/complete' && ref !== null && typeof ref === 'object' && ref.type === 'ref/prompt') return { ...params, ref: { ...ref, name: inwardName(ref.name, naming) } };
  return params;
}

function inwardName(name: unknown, naming: PromptNaming): string {
  const inward = typeof name === 'string' ? naming.inward(name) : undefined;
  if (inward === undefined) throw new McpError(ErrorCode.InvalidParams, 'unknown prompt');
  return inward;
}

/** A `prompts/list` page with each prompt's name as the client sees it (a malformed page as it is: the client's SDK refuses it). */
function outwardPrompts<T extends Params>(result: T, naming: PromptNaming): T {
  const prompts = result.prompts;
  if (!Array.isArray(prompts)) return result;
  return { ...result, prompts: prompts.map((p: unknown) => (p !== null && typeof p === 'object' && typeof (p as Params).name === 'string' ? { ...(p as Params), name: naming.outward((p as Params).name as string) } : p)) };
}

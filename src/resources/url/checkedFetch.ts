import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import { parseIp } from '../../domain/addresses';
import type { HopFacts } from '../../domain/fetchHop';
import { limits } from '../../domain/limits';
import { scopeCovers } from '../../domain/resources';
import type { CheckedFetchInit, ResolveHost, ResourceRefusalCode } from '../../stream/ports/toolResources';
import { ResourceRefusedError } from '../resourceRefusedError';
import { callerHeaders } from './routingHeaders';
import { parseUrlResource, type ParsedUrlResource } from './urlResource';

export type { CheckedFetchInit, ResolveHost };


/** What `ctx.fetch` needs from the ledger: the call's grant scopes and a way to decide and log a hop. */
export interface HopGate {
  readonly scopes: () => readonly string[];
  readonly decide: (facts: HopFacts) => Promise<'allowed' | ResourceRefusalCode>;
}


const redirectStatuses = new Set([301, 302, 303, 307, 308]);
// Sent only to the origin they were meant for (the Fetch standard drops Authorization on cross-origin redirects too).
const originBoundHeaders = ['authorization', 'cookie', 'proxy-authorization'];

async function decided(gate: HopGate, facts: HopFacts): Promise<void> {
  const verdict = await gate.decide(facts);
  if (verdict !== 'allowed') throw new ResourceRefusedError(verdict);
}

/** The one address this hop may connect to: the literal itself, or the first the resolver gives. */
async function addressOf(target: ParsedUrlResource, resolveHost: ResolveHost): Promise<string> {
  const literal = target.host.startsWith('[') ? target.host.slice(1, -1) : target.host;
  if (parseIp(literal) !== undefined) return literal;
  let addresses: readonly string[];
  try {
    addresses = await resolveHost(target.host);
  } catch {
    throw new TypeError('fetch failed: the host did not resolve');
  }
  const first = addresses[0];
  if (typeof first !== 'string') throw new TypeError('fetch failed: the host did not resolve');
  return first;
}

interface HopRequest {
  readonly url: URL;
  readonly address: string;
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body: string | Uint8Array | undefined;
  readonly signal: AbortSignal | undefined;
}

/** One request, connected to `address` only: the pinned lookup answers with it, and no agent pools sockets across hosts. */
function send(request: HopRequest): Promise<IncomingMessage> {
  const family = request.address.includes(':') ? 6 : 4;
  const lookup: LookupFunction = (_hostname, options, callback) => {
    if (options.all === true) (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: request.address, family }]);
    else callback(null, request.address, family);
  };
  const hostname = request.url.hostname.startsWith('[') ? request.url.hostname.slice(1, -1) : request.url.hostname;
  const client = request.url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const outgoing = client.request({
      protocol: request.url.protocol,
      hostname,
      port: request.url.port === '' ? undefined : Number(request.url.port),
      path: `${request.url.pathname}${request.url.search}`,
      method: request.method,
      headers: request.headers,
      agent: false,
      lookup,
      signal: request.signal,
    });
    outgoing.once('response', resolve);
    outgoing.once('error', reject);
    outgoing.end(request.body);
  });
}

function toResponse(incoming: IncomingMessage, method: string): Response {
  const status = incoming.statusCode ?? 0;
  if (status < 200 || status > 599) {
    incoming.resume();
    throw new TypeError('fetch failed: the server answered with a status Response cannot carry');
  }
  const headers = new Headers();
  for (const [key, value] of Object.entries(incoming.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(key, v);
    else if (value !== undefined) headers.append(key, value);
  }
  const bodiless = method === 'HEAD' || status === 204 || status === 304;
  if (bodiless) incoming.resume();
  return new Response(bodiless ? null : (Readable.toWeb(incoming) as ReadableStream<Uint8Array>), { status, statusText: incoming.statusMessage ?? '', headers });
}

/**
 * `fetch` for tools. Every hop (the request and each redirect, at most 10) is canonicalized here,
 * decided by the ledger against this call's grant and logged as a `fetch.hop` event before any
 * connection: a resource outside every scope is refused without even resolving its host; a covered
 * one is resolved once and its address decided too; the connection then goes to that address only.
 */
export async function checkedFetch(input: string | URL, init: CheckedFetchInit, gate: HopGate, resolveHost: ResolveHost, callSignal: AbortSignal): Promise<Response> {
  const signal = init.signal === undefined ? callSignal : AbortSignal.any([callSignal, init.signal]);
  let method = (init.method ?? 'GET').toUpperCase();
  // Before any hop: a header that picks another host or path behind the checked URL is refused.
  let headers = callerHeaders(init.headers);
  let body = init.body;
  let current: string | URL = input;
  let origin: string | undefined;
  for (let hop = 0; ; hop++) {
    signal.throwIfAborted();
    let target: ParsedUrlResource;
    try {
      target = parseUrlResource(current);
    } catch {
      await decided(gate, { hop, resource: undefined, address: undefined });
      throw new ResourceRefusedError('invalid_resource');
    }
    const covered = gate.scopes().some((scope) => scopeCovers(scope, target.resource));
    const address = covered && hop <= limits.redirectsMax ? await addressOf(target, resolveHost) : undefined;
    await decided(gate, { hop, resource: target.resource, address });
    if (origin !== undefined && origin !== target.url.origin) for (const name of originBoundHeaders) delete headers[name];
    origin = target.url.origin;
    if (body !== undefined && headers['content-length'] === undefined) headers = { ...headers, 'content-length': String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength) };
    const incoming = await send({ url: target.url, address: address as string, method, headers, body, signal });
    const status = incoming.statusCode ?? 0;
    const location = incoming.headers.location;
    if (!redirectStatuses.has(status) || location === undefined || init.redirect === 'manual') return toResponse(incoming, method);
    incoming.resume();
    if (init.redirect === 'error') throw new TypeError('fetch failed: redirect with redirect: "error"');
    try {
      current = new URL(location, target.url);
    } catch {
      current = location; // refused as invalid_resource (and logged) at the next hop
    }
    // As the Fetch standard: 303, and 301/302 after POST, continue as GET without a body.
    if (status === 303 ? method !== 'HEAD' : (status === 301 || status === 302) && method === 'POST') {
      method = 'GET';
      body = undefined;
      delete headers['content-length'];
      delete headers['content-type'];
    }
  }
}

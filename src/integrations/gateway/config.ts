import path from 'node:path';
import { parsePolicy, PolicyError, type Policy } from '../mcp/policy';

/** A gateway config file (docs/gateway.md): parsed strictly, every problem named by its field. */
export interface GatewayConfig {
  /** A SQLite file (absolute, resolved against the config file's directory) or a `postgres://` URL. */
  readonly ledger: string;
  readonly listen: { readonly host: string; readonly port: number };
  /** The MCP endpoint; its path is served. Port 0: the port the gateway is bound to (tests). */
  readonly publicUrl: URL;
  readonly upstreams: ReadonlyMap<string, UpstreamConfig>;
  readonly toolNames: 'prefixed' | 'plain';
  readonly auth: { readonly tokens: true } | { readonly oauth: OAuthConfig };
  /** oauth: principal → policy name; '*' for anyone else. */
  readonly principals: ReadonlyMap<string, string>;
  readonly policies: ReadonlyMap<string, Policy>;
  /** Origins accepted besides publicUrl's own (serialized origins, e.g. `https://app.example`). */
  readonly allowedOrigins: readonly string[];
  readonly limits: GatewayLimits;
}

export type UpstreamConfig =
  | { readonly kind: 'stdio'; readonly command: string; readonly args: readonly string[]; readonly env: { readonly [name: string]: string } }
  | { readonly kind: 'http'; readonly url: URL };

export interface OAuthConfig {
  readonly issuer: string;
  /** A JWKS URL, or the keys inline. */
  readonly jwks: URL | { readonly keys: readonly Record<string, unknown>[] };
  readonly principalClaim: string;
}

export interface GatewayLimits {
  readonly sessionsMax: number;
  readonly requestBytesMax: number;
  readonly callsInFlightPerSessionMax: number;
  readonly sessionIdleMs: number;
  /** On SIGTERM, how long calls in flight may still run before they are cancelled. */
  readonly shutdownGraceMs: number;
}

export const defaultLimits: GatewayLimits = { sessionsMax: 1_000, requestBytesMax: 4_194_304, callsInFlightPerSessionMax: 16, sessionIdleMs: 1_800_000, shutdownGraceMs: 10_000 };
export const configBytesMax = 1_048_576;
const upstreamsMax = 64;
const namesMax = 10_000;
/** An upstream name: no `__` (the prefix separator) and no trailing `_`, so a prefixed name splits one way. */
const upstreamNamePattern = /^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?=[A-Za-z0-9-])){0,31}$/;
const nameMax = 256;

export class GatewayConfigError extends Error {
  override readonly name = 'GatewayConfigError';
  constructor(readonly field: string, problem: string) {
    super(`gateway config ${field}: ${problem}`);
  }
}

type Obj = { readonly [key: string]: unknown };

function isObject(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function object(value: unknown, field: string, allowed: readonly string[]): Obj {
  if (!isObject(value)) throw new GatewayConfigError(field, 'must be an object');
  for (const key of Object.keys(value)) if (!allowed.includes(key)) throw new GatewayConfigError(`${field === '(config)' ? '' : `${field}.`}${key}`, 'is not a field here');
  return value;
}

function text(value: unknown, field: string, max = 4_096): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > max) throw new GatewayConfigError(field, `must be a non-empty string of at most ${max} characters`);
  return value;
}

function positive(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) throw new GatewayConfigError(field, 'must be a positive integer');
  return value;
}

function entries(value: unknown, field: string): [string, unknown][] {
  if (!isObject(value)) throw new GatewayConfigError(field, 'must be an object');
  const list = Object.entries(value);
  if (list.length > namesMax) throw new GatewayConfigError(field, `has more than ${namesMax} entries`);
  return list;
}

/** Parses a config file's text; `configFile` anchors a relative ledger path. Throws GatewayConfigError. */
export function parseGatewayConfig(source: string, configFile: string): GatewayConfig {
  if (Buffer.byteLength(source, 'utf8') > configBytesMax) throw new GatewayConfigError('(config)', `is larger than ${configBytesMax} bytes`);
  let value: unknown;
  try {
    value = JSON.parse(source) as unknown;
  } catch (error) {
    throw new GatewayConfigError('(config)', `is not JSON (${(error as Error).message})`);
  }
  const root = object(value, '(config)', ['ledger', 'listen', 'publicUrl', 'upstreams', 'toolNames', 'auth', 'principals', 'policies', 'allowedOrigins', 'limits']);
  const ledgerText = text(root.ledger, 'ledger');
  const ledger = /^postgres(ql)?:\/\//.test(ledgerText) ? ledgerText : path.resolve(path.dirname(path.resolve(configFile)), ledgerText);
  const listen = parseListen(root.listen);
  const publicUrl = parsePublicUrl(root.publicUrl);
  const toolNames = root.toolNames ?? 'prefixed';
  if (toolNames !== 'prefixed' && toolNames !== 'plain') throw new GatewayConfigError('toolNames', 'must be "prefixed" or "plain"');
  const auth = parseAuth(root.auth);
  const policies = parsePolicies(root.policies);
  const principals = parsePrincipals(root.principals, policies, 'oauth' in auth);
  return {
    ledger,
    listen,
    publicUrl,
    upstreams: parseUpstreams(root.upstreams),
    toolNames,
    auth,
    principals,
    policies,
    allowedOrigins: parseOrigins(root.allowedOrigins),
    limits: parseLimits(root.limits),
  };
}

function parseListen(value: unknown): GatewayConfig['listen'] {
  const listen = text(value, 'listen', 300);
  const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(listen);
  const port = match === null ? NaN : Number(match[2]);
  if (match === null || port > 65_535) throw new GatewayConfigError('listen', 'must be host:port (e.g. "127.0.0.1:8787")');
  return { host: (match[1] as string).replace(/^\[|\]$/g, ''), port };
}

function parsePublicUrl(value: unknown): URL {
  let url: URL;
  try {
    url = new URL(text(value, 'publicUrl'));
  } catch (error) {
    if (error instanceof GatewayConfigError) throw error;
    throw new GatewayConfigError('publicUrl', 'must be an absolute http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new GatewayConfigError('publicUrl', 'must be an http:// or https:// URL');
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') throw new GatewayConfigError('publicUrl', 'must have no query, fragment or user info');
  if (url.pathname === '/' || url.pathname.startsWith('/.well-known/') || url.pathname === '/healthz') throw new GatewayConfigError('publicUrl', 'needs a path of its own (e.g. /mcp), not /, /healthz or under /.well-known/');
  return url;
}

export function parseUpstreams(value: unknown): ReadonlyMap<string, UpstreamConfig> {
  const list = entries(value, 'upstreams');
  if (list.length === 0 || list.length > upstreamsMax) throw new GatewayConfigError('upstreams', `must name 1 to ${upstreamsMax} upstreams`);
  const upstreams = new Map<string, UpstreamConfig>();
  for (const [name, spec] of list) {
    const field = `upstreams.${name}`;
    if (!upstreamNamePattern.test(name)) throw new GatewayConfigError(field, 'an upstream name is 1-32 letters, digits, - or _ (no "__", no trailing _)');
    const upstream = object(spec, field, ['command', 'env', 'url']);
    if ((upstream.command === undefined) === (upstream.url === undefined)) throw new GatewayConfigError(field, 'give exactly one of command or url');
    if (upstream.url !== undefined) {
      if (upstream.env !== undefined) throw new GatewayConfigError(`${field}.env`, 'only with command');
      let url: URL;
      try {
        url = new URL(text(upstream.url, `${field}.url`));
      } catch {
        throw new GatewayConfigError(`${field}.url`, 'must be an absolute http:// or https:// URL');
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new GatewayConfigError(`${field}.url`, 'must be an http:// or https:// URL');
      upstreams.set(name, { kind: 'http', url });
      continue;
    }
    const command = upstream.command;
    if (!Array.isArray(command) || command.length === 0 || command.length > 256) throw new GatewayConfigError(`${field}.command`, 'must be a list of 1 to 256 strings (the program, then its arguments)');
    const words = command.map((word, i) => text(word, `${field}.command[${i}]`));
    upstreams.set(name, { kind: 'stdio', command: words[0] as string, args: words.slice(1), env: parseEnv(upstream.env, `${field}.env`) });
  }
  return upstreams;
}

function parseEnv(value: unknown, field: string): { readonly [name: string]: string } {
  if (value === undefined) return {};
  const env: Record<string, string> = {};
  for (const [name, v] of entries(value, field)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,127}$/.test(name)) throw new GatewayConfigError(`${field}.${name}`, 'is not an environment variable name');
    if (typeof v !== 'string' || v.length > 32_768) throw new GatewayConfigError(`${field}.${name}`, 'must be a string');
    env[name] = v;
  }
  return env;
}

function parseAuth(value: unknown): GatewayConfig['auth'] {
  const auth = object(value, 'auth', ['tokens', 'oauth']);
  if ((auth.tokens === undefined) === (auth.oauth === undefined)) throw new GatewayConfigError('auth', 'give exactly one of tokens or oauth');
  if (auth.tokens !== undefined) {
    if (auth.tokens !== true) throw new GatewayConfigError('auth.tokens', 'must be true');
    return { tokens: true };
  }
  const oauth = object(auth.oauth, 'auth.oauth', ['issuer', 'jwks', 'principalClaim']);
  const issuer = text(oauth.issuer, 'auth.oauth.issuer');
  const principalClaim = oauth.principalClaim === undefined ? 'sub' : text(oauth.principalClaim, 'auth.oauth.principalClaim', 128);
  let jwks: OAuthConfig['jwks'];
  if (typeof oauth.jwks === 'string') {
    try {
      jwks = new URL(oauth.jwks);
    } catch {
      throw new GatewayConfigError('auth.oauth.jwks', 'must be an https:// (or http://) URL or { "keys": [...] }');
    }
    if (jwks.protocol !== 'https:' && jwks.protocol !== 'http:') throw new GatewayConfigError('auth.oauth.jwks', 'must be an http(s) URL');
  } else {
    const set = object(oauth.jwks, 'auth.oauth.jwks', ['keys']);
    if (!Array.isArray(set.keys) || set.keys.length === 0 || set.keys.length > 100 || !set.keys.every(isObject)) throw new GatewayConfigError('auth.oauth.jwks.keys', 'must be a list of 1 to 100 JWK objects');
    jwks = { keys: set.keys as Record<string, unknown>[] };
  }
  return { oauth: { issuer, jwks, principalClaim } };
}

function parsePolicies(value: unknown): ReadonlyMap<string, Policy> {
  const policies = new Map<string, Policy>();
  if (value === undefined) return policies;
  for (const [name, spec] of entries(value, 'policies')) {
    const field = `policies.${name}`;
    if (name.length === 0 || name.length > nameMax) throw new GatewayConfigError(field, `a policy name is 1 to ${nameMax} characters`);
    try {
      policies.set(name, parsePolicy(JSON.stringify(spec)));
    } catch (error) {
      if (!(error instanceof PolicyError)) throw error;
      throw new GatewayConfigError(`${field}.${error.field}`, error.message.slice(`policy ${error.field}: `.length));
    }
  }
  return policies;
}

function parsePrincipals(value: unknown, policies: ReadonlyMap<string, Policy>, oauth: boolean): ReadonlyMap<string, string> {
  const principals = new Map<string, string>();
  if (value === undefined) {
    if (oauth) throw new GatewayConfigError('principals', 'is required with auth.oauth (principal -> policy name)');
    return principals;
  }
  if (!oauth) throw new GatewayConfigError('principals', 'only with auth.oauth (a capability token carries its own grant)');
  for (const [principal, policy] of entries(value, 'principals')) {
    const field = `principals.${principal}`;
    if (principal.length === 0 || principal.length > nameMax) throw new GatewayConfigError(field, `a principal is 1 to ${nameMax} characters`);
    if (typeof policy !== 'string' || !policies.has(policy)) throw new GatewayConfigError(field, 'must name a policy in policies');
    principals.set(principal, policy);
  }
  return principals;
}

function parseOrigins(value: unknown): readonly string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > 1_000) throw new GatewayConfigError('allowedOrigins', 'must be a list of at most 1,000 origins');
  return value.map((origin, i) => {
    const field = `allowedOrigins[${i}]`;
    let url: URL;
    try {
      url = new URL(text(origin, field, 2_048));
    } catch {
      throw new GatewayConfigError(field, 'must be an origin such as "https://app.example"');
    }
    if (url.origin === 'null' || url.origin !== origin) throw new GatewayConfigError(field, `must be a serialized origin (scheme://host[:port], no path), e.g. ${JSON.stringify(url.origin)}`);
    return url.origin;
  });
}

function parseLimits(value: unknown): GatewayLimits {
  if (value === undefined) return defaultLimits;
  const limits = object(value, 'limits', Object.keys(defaultLimits));
  const read = (key: keyof GatewayLimits): number => (limits[key] === undefined ? defaultLimits[key] : positive(limits[key], `limits.${key}`));
  return {
    sessionsMax: read('sessionsMax'),
    requestBytesMax: read('requestBytesMax'),
    callsInFlightPerSessionMax: read('callsInFlightPerSessionMax'),
    sessionIdleMs: read('sessionIdleMs'),
    shutdownGraceMs: read('shutdownGraceMs'),
  };
}

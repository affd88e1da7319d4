import { randomUUID } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Ledger } from '../../stream/types';
import type { GrantInvoke, McpTelemetry } from '../mcp/telemetry';
import { printable } from '../../text/printable';
import { bearerOf, sameCredential, type AuthRefused } from './auth';
import type { AuthenticatorFactory } from './authenticators';
import { checkGatewayPolicies } from './gatewayPolicies';
import type { GatewayConfig } from './config';
import { GrantTemplateIndex } from './grantTemplateIndex';
import { readJsonBody, sendJson, sendRpcError } from './httpReplies';
import { allowedHost, allowedOrigin } from './requestOrigin';
import { GatewaySession } from './session';
import { createSessionServer } from './sessionServer';
import { systemSetTimer, type SetTimer } from './stdioSupervisor';
import { GatewayUpstreams } from './upstreams';
import { sessionNotifier } from './sessionNotifier';

export interface GatewayOptions {
  readonly config: GatewayConfig;
  /** Opened by the caller, who closes it after `shutdown()`. */
  readonly ledger: Ledger;
  /** Built once the upstreams' tools are registered, given the served publicUrl (the OAuth audience). */
  readonly authenticator: AuthenticatorFactory;
  readonly version: string;
  /** ms since epoch; session idleness and token checks read it. Default Date.now. */
  readonly clock?: () => number;
  /** Upstream restarts, the idle sweep and the shutdown wait are scheduled through it. */
  readonly setTimer?: SetTimer;
  /** One line per decision or event; never a token, claim value or argument value. */
  readonly report?: (line: string) => void;
  readonly upstreamTimeoutMs?: number;
  /** Spans per tools/call and per upstream call (`atc gateway --otel`); default none. */
  readonly telemetry?: McpTelemetry;
  /** How a session's call runs for its grant; default `ledger.invokeAsGrant` (`--otel`: inside the ledger's span). */
  readonly invoke?: GrantInvoke;
}

export interface RunningGateway {
  /** The MCP endpoint as served (publicUrl, with the bound port when it named port 0). */
  readonly url: URL;
  sessions(): number;
  /** Closes every session idle for `limits.sessionIdleMs` with no call in flight; resolves how many. */
  sweepIdleSessions(): Promise<number>;
  /** Stops accepting, lets calls in flight finish (bounded by limits.shutdownGraceMs), then closes sessions and upstreams. */
  shutdown(): Promise<void>;
}

const shutdownPollMs = 25;

/** Starts the gateway: upstreams attached and their tools registered, then the HTTP server listening. */
export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const { config, ledger } = options;
  const clock = options.clock ?? Date.now;
  const setTimer = options.setTimer ?? systemSetTimer;
  const report = options.report ?? (() => undefined);
  const templates = new GrantTemplateIndex(ledger);
  const sessions = new Map<string, GatewaySession>();
  const notifier = sessionNotifier(sessions, report);
  let upstreams: GatewayUpstreams;
  try {
    upstreams = await GatewayUpstreams.start(ledger, config, templates, {
      version: options.version,
      setTimer,
      report,
      broadcast: notifier.broadcast,
      toolsChanged: notifier.toolsChanged,
      ...(options.upstreamTimeoutMs !== undefined ? { upstreamTimeoutMs: options.upstreamTimeoutMs } : {}),
      ...(options.telemetry !== undefined ? { telemetry: options.telemetry } : {}),
    });
  } catch (error) {
    templates.close();
    throw error;
  }
  for (const [name, why] of upstreams.tools.refused) report(`tool ${printable(name)} refused: ${printable(why)}`);
  let url = config.publicUrl;
  let authenticator;
  try {
    checkGatewayPolicies(config, ledger, { now: clock(), report });
    authenticator = await options.authenticator(() => url);
  } catch (error) {
    templates.close();
    await upstreams.close();
    throw error;
  }

  let opening = 0;
  let accepting = true;
  let metadataPath = `/.well-known/oauth-protected-resource${url.pathname}`;
  let listenHost = '';

  const challenge = (refusal: AuthRefused | undefined): Record<string, string> => {
    const parts = [`resource_metadata="${url.origin}${metadataPath}"`];
    if (refusal?.error !== undefined) parts.push(`error="${refusal.error}"`, `error_description="${refusal.description.replace(/["\\]/g, '')}"`);
    return { 'www-authenticate': `Bearer ${parts.join(', ')}` };
  };

  const handleMcp = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!allowedOrigin(req.headers.origin, url, config.allowedOrigins)) return sendRpcError(res, 403, -32000, 'Forbidden: this Origin is not allowed');
    const auth = await authenticator.authenticate(bearerOf(req.headers.authorization));
    if (!auth.ok) {
      if (auth.status === 401) return sendRpcError(res, 401, -32001, `Unauthorized: ${auth.description}`, challenge(auth));
      return sendRpcError(res, 403, -32001, `Forbidden: ${auth.description}`);
    }
    let body: unknown;
    if (req.method === 'POST') {
      const read = await readJsonBody(req, config.limits.requestBytesMax);
      if (!read.ok) return sendRpcError(res, read.status, read.status === 413 ? -32600 : -32700, read.message, read.status === 413 ? { connection: 'close' } : {});
      body = read.body;
    }
    const sessionHeader = req.headers['mcp-session-id'];
    if (sessionHeader !== undefined) {
      const session = typeof sessionHeader === 'string' ? sessions.get(sessionHeader) : undefined;
      if (session === undefined) return sendRpcError(res, 404, -32001, 'Session not found');
      // Another credential (or another principal's) on this session: refused, nothing forwarded.
      if (!sameCredential(session.credentialDigest, auth.credentialDigest)) return sendRpcError(res, 403, -32001, 'Forbidden: this session belongs to another credential');
      session.lastSeen = clock();
      return session.transport.handleRequest(req, res, body);
    }
    if (req.method !== 'POST' || !isInitializeRequest(body)) return sendRpcError(res, 400, -32000, 'Bad Request: no Mcp-Session-Id; only an initialize request opens a session');
    if (sessions.size + opening >= config.limits.sessionsMax) return sendRpcError(res, 503, -32000, `Service Unavailable: ${config.limits.sessionsMax} sessions are open (limits.sessionsMax)`);
    await openSession(auth.credentialDigest, auth.grantId, auth.principal, req, res, body);
  };

  const openSession = async (credentialDigest: Buffer, grantId: string, principal: string | undefined, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> => {
    opening++;
    const session = new GatewaySession(credentialDigest, grantId, principal, clock(), (upstream, owner) => upstreams.connectHttp(upstream, owner));
    try {
      session.transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, session);
          report(`session opened for grant ${grantId}${principal !== undefined ? ` (principal ${logSafe(principal)})` : ''}`);
        },
        onsessionclosed: (id) => void closeSession(id),
      });
      session.transport.onclose = () => {
        const id = session.transport.sessionId;
        if (id !== undefined && sessions.get(id) === session) sessions.delete(id);
        upstreams.releaseSubscriptions(session);
      };
      session.server = createSessionServer({ ledger, session, tools: () => upstreams.tools, upstreams, version: options.version, callsInFlightMax: config.limits.callsInFlightPerSessionMax, report, ...(options.telemetry !== undefined ? { telemetry: options.telemetry } : {}), ...(options.invoke !== undefined ? { invoke: options.invoke } : {}) });
      await session.server.connect(session.transport);
      await session.transport.handleRequest(req, res, body);
    } finally {
      opening--;
    }
    if (session.transport.sessionId === undefined || !sessions.has(session.transport.sessionId)) await session.close();
  };

  const closeSession = async (id: string): Promise<void> => {
    const session = sessions.get(id);
    if (session === undefined) return;
    sessions.delete(id);
    upstreams.releaseSubscriptions(session);
    await session.close();
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0] as string;
    if (path === '/healthz' && (req.method === 'GET' || req.method === 'HEAD')) {
      const up = accepting && ledgerUp(ledger) && (await upstreams.healthy(clock()));
      return sendJson(res, up ? 200 : 503, { status: up ? 'up' : 'down' });
    }
    if (!accepting) return sendRpcError(res, 503, -32000, 'Service Unavailable: the gateway is shutting down', { connection: 'close' });
    if (!allowedHost(req.headers.host, url, listenHost)) return sendRpcError(res, 403, -32000, 'Forbidden: this Host is not served here');
    if (path === metadataPath && req.method === 'GET') return sendJson(res, 200, resourceMetadata(url, config));
    if (path !== url.pathname) return sendJson(res, 404, { error: 'not found' });
    if (req.method !== 'POST' && req.method !== 'GET' && req.method !== 'DELETE') return sendRpcError(res, 405, -32000, 'Method not allowed', { allow: 'GET, POST, DELETE' });
    return handleMcp(req, res);
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch(() => sendRpcError(res, 500, -32603, 'Internal error'));
  });
  // Bounds on what a client may hold open before it has sent its request (slow headers or body).
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  // Idle keep-alive connections outlive clients' own idle timeouts (undici's is 4 s against Node's
  // default 5 s here), so the client, not the server, closes one: otherwise a request sent on a socket
  // the server is closing at that moment fails ("other side closed") under load.
  server.keepAliveTimeout = 65_000;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.listen.port, config.listen.host, () => resolve());
    });
  } catch (error) {
    templates.close();
    await upstreams.close();
    throw error;
  }
  const address = server.address() as AddressInfo;
  listenHost = `${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  if (url.port === '0') {
    url = new URL(url.href);
    url.port = String(address.port);
    metadataPath = `/.well-known/oauth-protected-resource${url.pathname}`;
  }

  let idleTimer: (() => void) | undefined;
  const sweepIdleSessions = async (): Promise<number> => {
    const now = clock();
    const idle = Array.from(sessions.entries()).filter(([, s]) => s.inFlight === 0 && now - s.lastSeen >= config.limits.sessionIdleMs);
    await Promise.all(idle.map(([id]) => closeSession(id)));
    if (idle.length > 0) report(`${idle.length} idle sessions closed`);
    return idle.length;
  };
  const scheduleSweep = (): void => {
    idleTimer = setTimer(() => void sweepIdleSessions().finally(() => accepting && scheduleSweep()), Math.min(config.limits.sessionIdleMs, 60_000));
  };
  scheduleSweep();

  const inFlight = (): number => Array.from(sessions.values()).reduce((n, s) => n + s.inFlight, 0);
  const until = (done: () => boolean, ms: number): Promise<void> =>
    new Promise((resolve) => {
      const deadline = clock() + ms;
      const check = (): void => {
        if (done() || clock() >= deadline) resolve();
        else setTimer(check, shutdownPollMs);
      };
      check();
    });

  return {
    url,
    sessions: () => sessions.size,
    sweepIdleSessions,
    async shutdown() {
      if (!accepting) return;
      accepting = false;
      idleTimer?.();
      server.close();
      server.closeIdleConnections();
      await until(() => inFlight() === 0, config.limits.shutdownGraceMs);
      // Past the grace: cancel what still runs (settled call.failed, cancelled) and wait for the settlements.
      for (const session of sessions.values()) session.abortCalls();
      await until(() => inFlight() === 0, 5_000);
      await Promise.all(Array.from(sessions.keys(), (id) => closeSession(id)));
      server.closeAllConnections();
      templates.close();
      await upstreams.close();
    },
  };
}

/** RFC 9728 protected-resource metadata for the MCP endpoint. */
function resourceMetadata(url: URL, config: GatewayConfig): Record<string, unknown> {
  return {
    resource: url.href,
    ...('oauth' in config.auth ? { authorization_servers: [config.auth.oauth.issuer] } : {}),
    bearer_methods_supported: ['header'],
  };
}

/** A principal name fit for a log line: the IdP chooses it, so no control, format or other unusual character reaches a terminal. */
function logSafe(name: string): string {
  return JSON.stringify(name.slice(0, 64).replace(/[^\w.@+-]/g, '?'));
}

function ledgerUp(ledger: Ledger): boolean {
  try {
    ledger.inFlight();
    return true;
  } catch {
    return false;
  }
}

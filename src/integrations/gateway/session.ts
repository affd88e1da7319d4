import { randomUUID } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { RelaySession } from '../mcp/relay/callRouter';
import type { UpstreamConnection } from './callContext';
import { RelayRoutes } from './relayRoutes';

/**
 * One agent session (`Mcp-Session-Id`): bound to the digest of the credential that opened it and to
 * the grant it acts for, with its own connections to the HTTP upstreams (opened on first use).
 */
export class GatewaySession {
  lastSeen: number;
  inFlight = 0;
  /** Who this session is to the relay (an id unique in the process, and what its client declared). */
  readonly relay: RelaySession;
  /** Which upstream a resource URI or a prompt name the session has seen belongs to, and its subscriptions. */
  readonly routes = new RelayRoutes();
  private readonly httpConnections = new Map<string, Promise<UpstreamConnection>>();
  private readonly running = new Set<AbortController>();
  private closed = false;
  /** Set once the transport and server exist (right after construction). */
  transport!: StreamableHTTPServerTransport;
  server!: Server;

  constructor(
    readonly credentialDigest: Buffer,
    readonly grantId: string,
    readonly principal: string | undefined,
    now: number,
    private readonly connectHttp: (upstream: string, session: GatewaySession) => Promise<UpstreamConnection>,
  ) {
    this.lastSeen = now;
    this.relay = { id: randomUUID(), clientCapabilities: () => this.server.getClientCapabilities() };
  }

  httpConnection(upstream: string): Promise<UpstreamConnection> {
    if (this.closed) return Promise.reject(new Error('the session is closed'));
    let connection = this.httpConnections.get(upstream);
    if (connection === undefined) {
      connection = this.connectHttp(upstream, this);
      // A failed connection is not kept: the next call tries again.
      connection.catch(() => this.httpConnections.delete(upstream));
      this.httpConnections.set(upstream, connection);
    }
    return connection;
  }

  /** The HTTP connections already open (or opening), by upstream. */
  openHttpConnections(): ReadonlyMap<string, Promise<UpstreamConnection>> {
    return this.httpConnections;
  }

  /** A call starts: its controller is aborted if the gateway shuts down before it ends. */
  callStarted(controller: AbortController): void {
    this.inFlight++;
    this.running.add(controller);
  }

  callEnded(controller: AbortController): void {
    this.inFlight--;
    this.running.delete(controller);
  }

  abortCalls(): void {
    for (const controller of this.running) controller.abort(new Error('the gateway is shutting down'));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.abortCalls();
    await this.server.close().catch(() => undefined);
    const connections = Array.from(this.httpConnections.values());
    this.httpConnections.clear();
    await Promise.all(connections.map((c) => c.then((connection) => connection.client.close()).catch(() => undefined)));
  }
}

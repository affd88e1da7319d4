import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

/**
 * One agent session (`Mcp-Session-Id`): bound to the digest of the credential that opened it and to
 * the grant it acts for, with its own clients of the HTTP upstreams (opened on first use).
 */
export class GatewaySession {
  lastSeen: number;
  inFlight = 0;
  private readonly httpClients = new Map<string, Promise<Client>>();
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
    private readonly connectHttp: (upstream: string) => Promise<Client>,
  ) {
    this.lastSeen = now;
  }

  httpClient(upstream: string): Promise<Client> {
    if (this.closed) return Promise.reject(new Error('the session is closed'));
    let client = this.httpClients.get(upstream);
    if (client === undefined) {
      client = this.connectHttp(upstream);
      // A failed connection is not kept: the next call tries again.
      client.catch(() => this.httpClients.delete(upstream));
      this.httpClients.set(upstream, client);
    }
    return client;
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
    const clients = Array.from(this.httpClients.values());
    this.httpClients.clear();
    await Promise.all(clients.map((c) => c.then((client) => client.close()).catch(() => undefined)));
  }
}

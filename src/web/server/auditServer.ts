import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LogReader } from './logReader';
import { isLoopbackHost, loopbackHostHeaders } from './loopback';
import { loadPageAssets, type PageAsset } from './pageAssets';
import { dataLine, streamLog, streamPageEventsMax, type StreamTiming } from './eventStream';
import { securityHeaders } from './securityHeaders';

/** A signed checkpoint and the verifier key to check it with; the page checks both itself. */
export interface CheckpointFiles {
  readonly note: string;
  readonly verifierKey: string;
}

export interface AuditServerOptions {
  readonly reader: LogReader;
  /** Default 127.0.0.1. A host that is not loopback needs `allowRemote`. */
  readonly host?: string;
  /** Default 0: any free port. */
  readonly port?: number;
  readonly allowRemote?: boolean;
  readonly checkpoint?: CheckpointFiles;
  readonly assets?: ReadonlyMap<string, PageAsset>;
  readonly timing?: Partial<StreamTiming>;
  /** Concurrent event streams; more get 503. */
  readonly streamsMax?: number;
}

export interface AuditServer {
  /** `http://HOST:PORT/` */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

export const streamsMaxDefault = 16;
const timingDefault: StreamTiming = { pollMs: 250, keepAliveMs: 15_000 };
const methodsAllowed = 'GET, HEAD';

/**
 * Starts the read-only audit server: the bundled page, the log as Server-Sent Events and, when
 * given, a checkpoint to check against. It has no route that writes: every method but GET and
 * HEAD is refused, and the only store access is `reader`.
 */
export async function startAuditServer(options: AuditServerOptions): Promise<AuditServer> {
  const host = options.host ?? '127.0.0.1';
  const loopback = isLoopbackHost(host);
  if (!loopback && options.allowRemote !== true) throw new Error(`refusing to serve on ${host}: it is not a loopback address (pass allowRemote / --allow-remote to expose the log)`);
  const assets = options.assets ?? loadPageAssets();
  const timing: StreamTiming = { ...timingDefault, ...options.timing };
  const streamsMax = options.streamsMax ?? streamsMaxDefault;
  const streams = new Set<AbortController>();
  let allowedHosts: ReadonlySet<string> = new Set();

  const server = createServer((req, res) => {
    for (const [name, value] of Object.entries(securityHeaders)) res.setHeader(name, value);
    void handle(req, res).catch(() => {
      if (!res.headersSent) send(res, 500, 'internal error\n');
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', methodsAllowed);
      // Discard whatever body came with it, and end the connection: nothing here reads a request body.
      req.resume();
      res.setHeader('Connection', 'close');
      return send(res, 405, 'this server is read-only\n');
    }
    if (loopback && !allowedHosts.has(req.headers.host ?? '')) return send(res, 403, 'unexpected Host header\n');
    const route = new URL(req.url ?? '/', 'http://audit.invalid').pathname;
    const asset = assets.get(route);
    if (asset !== undefined) {
      res.writeHead(200, { 'Content-Type': asset.contentType, 'Content-Length': asset.body.length });
      return void res.end(req.method === 'HEAD' ? undefined : asset.body);
    }
    if (route === '/checkpoint.json') {
      // `{}` when atc serve was given no checkpoint: the page then shows the chain status only.
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return void res.end(req.method === 'HEAD' ? undefined : JSON.stringify(options.checkpoint ?? {}));
    }
    if (route === '/events') return openStream(req, res);
    if (route === '/bodies') return sendBodies(req, res);
    return send(res, 404, 'not found\n');
  }

  /**
   * `/bodies?after=N&limit=L`: the stored bodies after seq N, at most L (≤ streamPageEventsMax), as
   * the stream's data lines, one per line; fewer than L means the log ends there. The page re-reads
   * the log with it to notice an event that changed or vanished after it verified it (its sweep,
   * docs/audit.md).
   */
  async function sendBodies(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const query = new URL(req.url ?? '/', 'http://audit.invalid').searchParams;
    const after = query.get('after') ?? '0';
    const limit = query.get('limit') ?? String(streamPageEventsMax);
    if (!/^\d{1,15}$/.test(after) || !/^\d{1,15}$/.test(limit) || Number(limit) < 1 || Number(limit) > streamPageEventsMax) return send(res, 400, 'bad after or limit\n');
    const rows = await options.reader.bodiesAfter(Number(after), Number(limit));
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });
    res.end(req.method === 'HEAD' ? undefined : rows.map((row) => `${dataLine(row)}\n`).join(''));
  }

  async function openStream(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const after = resumePoint(req);
    if (after === undefined) return send(res, 400, 'bad Last-Event-ID or after\n');
    if (streams.size >= streamsMax) return send(res, 503, 'too many open streams\n');
    res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', Connection: 'keep-alive' });
    if (req.method === 'HEAD') return void res.end();
    const controller = new AbortController();
    streams.add(controller);
    const stop = (): void => controller.abort();
    req.on('close', stop);
    res.on('close', stop);
    try {
      await streamLog(options.reader, res, after, timing, controller.signal);
    } finally {
      streams.delete(controller);
      res.end();
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  allowedHosts = loopbackHostHeaders(port);
  const shownHost = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${port}/`,
    port,
    close: async () => {
      for (const stream of streams) stream.abort();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Where a stream starts: after `Last-Event-ID` (an EventSource reconnecting) or `?after=N`, else 0. */
function resumePoint(req: IncomingMessage): number | undefined {
  const header = req.headers['last-event-id'];
  const query = new URL(req.url ?? '/', 'http://audit.invalid').searchParams.get('after');
  const text = typeof header === 'string' && header !== '' ? header : query ?? '0';
  if (!/^\d{1,15}$/.test(text)) return undefined;
  return Number(text);
}

function send(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' });
  res.end(text);
}

// A minimal Streamable HTTP front for a stdio MCP server command: one child process per HTTP
// session, messages piped both ways. Test harness only (the conformance suite speaks HTTP, `atc
// proxy` speaks stdio; the gateway front needs none). Localhost only, with the Host check the
// suite's DNS-rebinding scenario expects.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';

export interface StdioCommand {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: { readonly [name: string]: string };
}

export interface Bridge {
  readonly url: string;
  close(): Promise<void>;
}

const bodyBytesMax = 4 * 1024 * 1024;

type Message = JSONRPCMessage & { readonly id?: RequestId; readonly method?: string; readonly params?: { readonly _meta?: { readonly progressToken?: unknown }; readonly progressToken?: unknown } };

/** Pipes one HTTP session to one child. Which HTTP stream a child message goes on: see `related`. */
function session(command: StdioCommand, onClosed: (id: string) => void): { transport: StreamableHTTPServerTransport; start(): Promise<void> } {
  const child = new StdioClientTransport({ command: command.command, args: [...command.args], env: { ...command.env }, stderr: 'ignore' });
  const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
  /** Client requests the child has not answered yet, and the progress tokens they carry. */
  const open = new Set<RequestId>();
  const progress = new Map<unknown, RequestId>();
  // Over stdio nothing says which request a notification or a server request belongs to: progress
  // goes by its token, anything else with the one request open (else on the session's GET stream).
  const related = (message: Message): RequestId | undefined => {
    if (message.method === 'notifications/progress') return progress.get(message.params?.progressToken);
    if (message.method !== undefined && open.size === 1) return open.values().next().value;
    return undefined;
  };
  transport.onmessage = (message) => {
    const m = message as Message;
    if (m.method !== undefined && m.id !== undefined) {
      open.add(m.id);
      const token = m.params?._meta?.progressToken;
      if (token !== undefined) progress.set(token, m.id);
    }
    void child.send(message).catch(() => undefined);
  };
  child.onmessage = (message) => {
    const m = message as Message;
    if (m.method === undefined && m.id !== undefined) {
      open.delete(m.id);
      for (const [token, id] of progress) if (id === m.id) progress.delete(token);
    }
    const relatedRequestId = related(m);
    void transport.send(message, relatedRequestId !== undefined ? { relatedRequestId } : undefined).catch(() => undefined);
  };
  transport.onclose = () => {
    void child.close();
    if (transport.sessionId !== undefined) onClosed(transport.sessionId);
  };
  child.onclose = () => void transport.close();
  return {
    transport,
    start: async () => {
      await child.start();
    },
  };
}

async function readBody(req: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > bodyBytesMax) throw new Error('request body too large');
    chunks.push(chunk as Buffer);
  }
  return chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

function refuse(res: http.ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

/** Serves `/mcp` on 127.0.0.1 (ephemeral port), each session piped to its own `command`. */
export async function startBridge(command: StdioCommand): Promise<Bridge> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  let port = 0;
  const server = http.createServer((req, res) => {
    void (async () => {
      const host = req.headers.host ?? '';
      if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) return refuse(res, 403, `Invalid Host: ${host}`);
      if ((req.url ?? '').split('?')[0] !== '/mcp') return refuse(res, 404, 'not found');
      const body = req.method === 'POST' ? await readBody(req) : undefined;
      const id = req.headers['mcp-session-id'];
      let transport = typeof id === 'string' ? sessions.get(id) : undefined;
      if (transport === undefined) {
        if (typeof id === 'string') return refuse(res, 404, 'Session not found');
        const opened = session(command, (closed) => sessions.delete(closed));
        await opened.start();
        transport = opened.transport;
        await transport.handleRequest(req, res, body);
        if (transport.sessionId !== undefined) sessions.set(transport.sessionId, transport);
        else await transport.close();
        return;
      }
      await transport.handleRequest(req, res, body);
    })().catch(() => {
      if (!res.headersSent) refuse(res, 400, 'bad request');
      else res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://localhost:${port}/mcp`,
    close: async () => {
      for (const transport of sessions.values()) await transport.close().catch(() => undefined);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// Peers of the gateway scenario, over Streamable HTTP on 127.0.0.1 (each prints `listening <url>`):
//   node httpMcp.js echo                 a no-op upstream: one `echo` tool, a server per session
//   node httpMcp.js plain <upstreamUrl>  the baseline: a pass-through on the same SDK and transport,
//                                        an upstream client per session, tools/list and tools/call
//                                        forwarded with no checks and no ledger
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, CallToolResultSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

type SessionFactory = () => Promise<{ server: Server; close(): Promise<void> }>;

async function echoSession(): Promise<{ server: Server; close(): Promise<void> }> {
  const server = new Server({ name: 'bench-echo-http', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [{ name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } }] }));
  server.setRequestHandler(CallToolRequestSchema, (request) => ({ content: [{ type: 'text', text: String(request.params.arguments?.text) }] }));
  return { server, close: async () => undefined };
}

function plainSession(upstreamUrl: URL): SessionFactory {
  return async () => {
    const upstream = new Client({ name: 'plain-gateway', version: '1.0.0' });
    await upstream.connect(new StreamableHTTPClientTransport(upstreamUrl));
    const server = new Server({ name: 'plain-gateway', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => upstream.listTools());
    server.setRequestHandler(CallToolRequestSchema, (request, extra) => upstream.request({ method: 'tools/call', params: request.params }, CallToolResultSchema, { signal: extra.signal }));
    return { server, close: () => upstream.close() };
  };
}

async function serve(makeSession: SessionFactory): Promise<void> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const httpServer = http.createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body: unknown = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
      const id = req.headers['mcp-session-id'];
      let transport = typeof id === 'string' ? sessions.get(id) : undefined;
      if (transport === undefined) {
        const session = await makeSession();
        const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (sid) => void sessions.set(sid, created) });
        created.onclose = () => {
          if (created.sessionId !== undefined) sessions.delete(created.sessionId);
          void session.close();
        };
        await session.server.connect(created);
        transport = created;
      }
      await transport.handleRequest(req, res, body);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  httpServer.keepAliveTimeout = 65_000;
  httpServer.listen(0, '127.0.0.1', () => process.stdout.write(`listening http://127.0.0.1:${(httpServer.address() as AddressInfo).port}/mcp\n`));
  process.stdin.resume();
  process.stdin.once('end', () => process.exit(0));
}

const [role, upstream] = process.argv.slice(2);
void serve(role === 'plain' ? plainSession(new URL(upstream as string)) : echoSession);

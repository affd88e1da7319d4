import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ClientCapabilities, Tool } from '@modelcontextprotocol/sdk/types.js';
import { boundStdioFrames } from './boundedFrames';
import { keepProgressBeforeResponses } from './progressOrder';

/** Where the proxy's upstream MCP server is: a command it starts over stdio, or a Streamable HTTP URL. */
export type UpstreamTarget =
  | { readonly kind: 'stdio'; readonly command: string; readonly args: readonly string[]; readonly env: { readonly [name: string]: string } }
  | { readonly kind: 'http'; readonly url: URL };

export const upstreamToolsMax = 4_096;
const listPagesMax = 100;

/**
 * Connects an MCP client to the upstream. The child's environment is the one given (the proxy
 * passes its own without the token variable); no header or argument is added to the HTTP transport.
 * The HTTP transport never re-sends a message: reconnection only re-opens the server's event stream.
 * `capabilities`: what the client declares (the proxy: what its relay carries to its own client).
 */
export async function connectUpstream(target: UpstreamTarget, version: string, report: (line: string) => void = () => undefined, capabilities: ClientCapabilities = {}): Promise<Client> {
  const client = new Client({ name: 'atc-proxy', version }, { capabilities });
  let transport: StdioClientTransport | StreamableHTTPClientTransport;
  if (target.kind === 'stdio') {
    transport = new StdioClientTransport({ command: target.command, args: [...target.args], env: { ...target.env }, stderr: 'inherit' });
    // An oversized message fails the one call it answers instead of closing the upstream.
    boundStdioFrames(transport, 'the upstream', report);
  } else {
    transport = new StreamableHTTPClientTransport(target.url, { reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1_000, maxReconnectionDelay: 1_000, reconnectionDelayGrowFactor: 1 } });
  }
  await client.connect(transport);
  keepProgressBeforeResponses(transport);
  return client;
}

/** Every tool the upstream lists, all pages (bounded in pages and tools). */
export async function listUpstreamTools(client: Client): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < listPagesMax; page++) {
    const result = await client.listTools(cursor !== undefined ? { cursor } : undefined);
    tools.push(...result.tools);
    if (tools.length > upstreamToolsMax) throw new Error(`the upstream lists more than ${upstreamToolsMax} tools`);
    cursor = result.nextCursor;
    if (cursor === undefined) return tools;
  }
  throw new Error(`the upstream's tool list has more than ${listPagesMax} pages`);
}

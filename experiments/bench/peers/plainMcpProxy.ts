// The baseline of the MCP proxy scenario: a plain forwarding proxy on the same SDK (stdio server to
// the client, stdio client to the upstream), forwarding tools/list and tools/call with no checks.
//   node plainMcpProxy.js -- <command> [args…]
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, CallToolResultSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

async function main(): Promise<void> {
  const [command, ...args] = process.argv.slice(process.argv.indexOf('--') + 1);
  const upstream = new Client({ name: 'plain-proxy', version: '1.0.0' });
  await upstream.connect(new StdioClientTransport({ command: command as string, args }));
  const server = new Server({ name: 'plain-proxy', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => upstream.listTools());
  server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    upstream.request({ method: 'tools/call', params: request.params }, CallToolResultSchema, { signal: extra.signal }),
  );
  await server.connect(new StdioServerTransport());
  process.stdin.once('end', () => void upstream.close().then(() => process.exit(0)));
}

void main();

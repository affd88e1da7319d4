// The upstream of the MCP proxy scenario: one `echo` tool over stdio, nothing else (no logging), so
// both proxies in front of it pay the same, small upstream cost.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const server = new Server({ name: 'bench-echo', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, () => ({
  tools: [{ name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } }],
}));
server.setRequestHandler(CallToolRequestSchema, (request) => ({ content: [{ type: 'text', text: String(request.params.arguments?.text) }] }));
void server.connect(new StdioServerTransport());
process.stdin.once('end', () => process.exit(0));

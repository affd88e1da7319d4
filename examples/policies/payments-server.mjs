// A stand-in for a payments MCP server: it lists the tools a real one would (with their input
// schemas) and moves no money. `atc policy check|test examples/policies/payments.json -- node
// examples/policies/payments-server.mjs` lints and tests the policy against these schemas.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const object = (properties, required = []) => ({ type: 'object', properties, required, additionalProperties: false });
const tools = [
  { name: 'get_balance', description: 'the account balance', inputSchema: object({}) },
  { name: 'list_payments', description: 'recent payments', inputSchema: object({ limit: { type: 'integer', minimum: 1, maximum: 100 } }) },
  {
    name: 'create_payment',
    description: 'pays a payee',
    inputSchema: object(
      { amount_cents: { type: 'integer', minimum: 1 }, currency: { type: 'string', pattern: '^[A-Z]{3}$' }, payee_id: { type: 'string' }, memo: { type: 'string', maxLength: 140 } },
      ['amount_cents', 'currency', 'payee_id'],
    ),
  },
  { name: 'refund_payment', description: 'refunds a payment', inputSchema: object({ payment_id: { type: 'string' }, amount_cents: { type: 'integer', minimum: 1 } }, ['payment_id']) },
];

const server = new Server({ name: 'payments-stand-in', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
server.setRequestHandler(CallToolRequestSchema, () => ({ isError: true, content: [{ type: 'text', text: 'this stand-in moves no money' }] }));
await server.connect(new StdioServerTransport());

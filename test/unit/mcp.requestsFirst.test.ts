import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import * as types from '@modelcontextprotocol/sdk/types.js';
import { CallToolRequestSchema, type CallToolResult, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { dispatchRequestsFirst } from '../../src/integrations/mcp/requestsFirst';

/** A server with one tool, connected through the fast path (or not), and a client on the other end. */
async function connected(fastPath: boolean): Promise<{ server: Server; client: Client; serverEnd: InMemoryTransport; clientEnd: InMemoryTransport; errors: Error[]; installed: boolean }> {
  const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair();
  const server = new Server({ name: 's', version: '1' }, { capabilities: { tools: {} } });
  server.setRequestHandler(CallToolRequestSchema, (request): CallToolResult => ({ content: [{ type: 'text', text: `got ${request.params.name}` }] }));
  const errors: Error[] = [];
  server.onerror = (error) => void errors.push(error);
  await server.connect(serverEnd);
  const installed = fastPath ? dispatchRequestsFirst(server, serverEnd) : false;
  const client = new Client({ name: 'c', version: '1' });
  await client.connect(clientEnd);
  return { server, client, serverEnd, clientEnd, errors, installed };
}

afterEach(() => jest.restoreAllMocks());

describe('dispatchRequestsFirst: requests skip the SDK response guards', () => {
  it('answers tools/call and ping without running the response guards on them', async () => {
    const { client, server, installed } = await connected(true);
    expect(installed).toBe(true);
    const resultGuard = jest.spyOn(types, 'isJSONRPCResultResponse');
    const errorGuard = jest.spyOn(types, 'isJSONRPCErrorResponse');
    const result = await client.callTool({ name: 'echo', arguments: {} });
    await client.ping();
    expect(result.content).toEqual([{ type: 'text', text: 'got echo' }]);
    // The client's side still classifies the two responses it receives; the server's side ran no guard.
    const onServer = (calls: unknown[][]) => calls.filter(([m]) => Object.prototype.hasOwnProperty.call(m as object, 'method')).length;
    expect(onServer(resultGuard.mock.calls)).toBe(0);
    expect(onServer(errorGuard.mock.calls)).toBe(0);
    await client.close();
    await server.close();
  });

  it('without it, the SDK runs both response guards on every request (what the fast path saves)', async () => {
    const { client, server } = await connected(false);
    const resultGuard = jest.spyOn(types, 'isJSONRPCResultResponse');
    await client.callTool({ name: 'echo', arguments: {} });
    expect(resultGuard.mock.calls.filter(([m]) => Object.prototype.hasOwnProperty.call(m as object, 'method')).length).toBe(1);
    await client.close();
    await server.close();
  });

  it('still delivers responses to the server\'s own requests and notifications through the SDK', async () => {
    const { client, server, clientEnd } = await connected(true);
    await expect(server.ping()).resolves.toEqual({});
    const notified = new Promise<void>((resolve) => server.setNotificationHandler(types.RootsListChangedNotificationSchema, () => resolve()));
    await clientEnd.send({ jsonrpc: '2.0', method: 'notifications/roots/list_changed' });
    await expect(notified).resolves.toBeUndefined();
    await client.close();
    await server.close();
  });

  it('hands a request-shaped message that is not a valid request to the SDK, which reports it', async () => {
    const { client, server, clientEnd, errors } = await connected(true);
    await clientEnd.send({ jsonrpc: '2.0', id: 99, method: 5 } as unknown as JSONRPCMessage);
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(errors.map((e) => e.message)).toEqual([expect.stringContaining('Unknown message type')]);
    await client.close();
    await server.close();
  });

  it('changes nothing when the protocol has no request handler to call (another SDK release)', async () => {
    const [, serverEnd] = InMemoryTransport.createLinkedPair();
    const handler = (): void => undefined;
    serverEnd.onmessage = handler;
    expect(dispatchRequestsFirst({} as Server, serverEnd)).toBe(false);
    expect(serverEnd.onmessage).toBe(handler);
  });
});

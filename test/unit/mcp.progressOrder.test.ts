import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { CallToolResultSchema, type JSONRPCMessage, type JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { keepProgressBeforeResponses } from '../../src/integrations/mcp/progressOrder';

/**
 * A raw server end that answers `initialize`, and answers a tools/call with its progress
 * notifications and its result in one synchronous burst: what a busy proxy reads in one chunk.
 */
function burstServer(end: InMemoryTransport, answer: 'result' | 'error'): void {
  end.onmessage = (message: JSONRPCMessage) => {
    const request = message as JSONRPCRequest;
    if (request.method === 'initialize') {
      void end.send({ jsonrpc: '2.0', id: request.id, result: { protocolVersion: (request.params as { protocolVersion: string }).protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'burst', version: '1' } } });
    } else if (request.method === 'tools/call') {
      const progressToken = (request.params as { _meta: { progressToken: number } })._meta.progressToken;
      for (const progress of [1, 2, 3]) void end.send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken, progress, total: 3 } });
      if (answer === 'result') void end.send({ jsonrpc: '2.0', id: request.id, result: { content: [{ type: 'text', text: 'done' }] } });
      else void end.send({ jsonrpc: '2.0', id: request.id, error: { code: -32603, message: 'failed' } });
    }
  };
}

async function callWithProgress(reorder: boolean, answer: 'result' | 'error' = 'result'): Promise<number[]> {
  const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair();
  burstServer(serverEnd, answer);
  await serverEnd.start();
  const client = new Client({ name: 't', version: '1' });
  client.onerror = () => undefined; // the SDK reports the progress it dropped; the assertion is on what arrived
  await client.connect(clientEnd);
  if (reorder) keepProgressBeforeResponses(clientEnd);
  const seen: number[] = [];
  const call = client.request({ method: 'tools/call', params: { name: 'x', arguments: {} } }, CallToolResultSchema, { onprogress: (p) => void seen.push(p.progress) });
  if (answer === 'result') await call;
  else await expect(call).rejects.toThrow('failed');
  await client.close();
  return seen;
}

describe('progress that arrives in the same read as the result', () => {
  it('is lost by the SDK client as it comes (the reason for the reordering)', async () => {
    expect(await callWithProgress(false)).toEqual([]);
  });

  it('reaches the request before its result once responses are handed over a microtask later', async () => {
    expect(await callWithProgress(true)).toEqual([1, 2, 3]);
  });

  it('reaches the request before an error response too', async () => {
    expect(await callWithProgress(false, 'error')).toEqual([]);
    expect(await callWithProgress(true, 'error')).toEqual([1, 2, 3]);
  });
});

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createLedger, type Ledger } from '../../src';
import { ledgerMcpTools } from '../../src/integrations/mcp/middleware';

const hour = 3_600_000;
const text = (result: unknown): string => ((result as CallToolResult).content[0] as { text: string }).text;

interface Setup {
  ledger: Ledger;
  server: McpServer;
  ran: string[];
  connect(token: string | undefined): Promise<Client>;
}

/** A host's McpServer with two guarded tools, and clients whose requests carry a token as auth info. */
async function setup(): Promise<Setup> {
  const ledger = createLedger();
  const server = new McpServer({ name: 'host', version: '1.0.0' });
  const guarded = ledgerMcpTools(server, ledger);
  const ran: string[] = [];
  await guarded.registerTool('notes.write', {
    description: 'write a note',
    inputSchema: { type: 'object', properties: { path: { type: 'string' }, text: { type: 'string' } }, required: ['path', 'text'] },
    resources: (args) => [`notes:/${String(args.path)}`],
  }, (args) => {
    ran.push(`write ${String(args.path)}`);
    return { content: [{ type: 'text', text: 'written' }] };
  });
  await guarded.registerTool('notes.wait', { inputSchema: { type: 'object', properties: {} } }, (_args, ctx) => {
    ran.push('wait');
    return new Promise<CallToolResult>((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('aborted'))));
  });
  await guarded.registerTool('notes.delete', { inputSchema: { type: 'object', properties: {} } }, () => {
    ran.push('delete');
    return { content: [{ type: 'text', text: 'deleted' }] };
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  return {
    ledger,
    server,
    ran,
    async connect(token) {
      // What the SDK's bearer-auth middleware does over HTTP: each request arrives with authInfo.
      const send = clientSide.send.bind(clientSide);
      clientSide.send = (message, options) => send(message, { ...options, ...(token !== undefined ? { authInfo: { token, clientId: 'agent', scopes: [] } } : {}) });
      const client = new Client({ name: 'agent', version: '1.0.0' });
      await client.connect(clientSide);
      return client;
    },
  };
}

async function grant(ledger: Ledger, tools: string[]): Promise<{ token: string; grantId: string }> {
  return ledger.issue({ tools, resources: ['notes:/drafts/'], expiresAt: Date.now() + hour, budget: { calls: 10, inputBytes: 10_000 } });
}

describe('ledgerMcpTools: an McpServer whose tools are behind the ledger', () => {
  it('runs an allowed call with the token from the request auth info', async () => {
    const s = await setup();
    const { token } = await grant(s.ledger, ['notes.write', 'notes.wait']);
    const client = await s.connect(token);
    const result = await client.callTool({ name: 'notes.write', arguments: { path: 'drafts/a', text: 'hi' } });
    expect(text(result)).toBe('written');
    expect(result._meta).toEqual({ 'atc/callId': expect.stringMatching(/^c_/) });
    expect(s.ran).toEqual(['write drafts/a']);
    await client.close();
  });

  it('hides from tools/list the tools the token may not call', async () => {
    const s = await setup();
    const { token } = await grant(s.ledger, ['notes.write']);
    const client = await s.connect(token);
    expect((await client.listTools()).tools).toEqual([expect.objectContaining({ name: 'notes.write', description: 'write a note' })]);
    await client.close();
  });

  it('refuses a call outside the grant as an isError result, without running the tool', async () => {
    const s = await setup();
    const { token } = await grant(s.ledger, ['notes.write']);
    const client = await s.connect(token);
    const denied = await client.callTool({ name: 'notes.delete', arguments: {} });
    expect(denied).toMatchObject({ isError: true, _meta: { 'atc/reason': 'tool_not_granted' } });
    expect(text(denied)).toMatch(/^rejected: tool_not_granted/);
    const outside = await client.callTool({ name: 'notes.write', arguments: { path: 'private/a', text: 'x' } });
    expect(outside._meta).toMatchObject({ 'atc/reason': 'resource_not_permitted' });
    expect(s.ran).toEqual([]);
    await client.close();
  });

  it('lists nothing and refuses every call (logged unknown_token) for a request without a token', async () => {
    const s = await setup();
    await grant(s.ledger, ['notes.write']);
    const client = await s.connect(undefined);
    expect((await client.listTools()).tools).toEqual([]);
    const result = await client.callTool({ name: 'notes.write', arguments: { path: 'drafts/a', text: 'x' } });
    expect(result._meta).toMatchObject({ 'atc/reason': 'unknown_token' });
    expect(s.ledger.events().at(-1)).toMatchObject({ type: 'call.rejected', reason: 'unknown_token' });
    await client.close();
  });

  it('aborts ctx.signal on the client cancellation and settles the call cancelled', async () => {
    const s = await setup();
    const { token } = await grant(s.ledger, ['notes.wait']);
    const client = await s.connect(token);
    const cancel = new AbortController();
    const admitted = new Promise<void>((resolve) => s.ledger.decisions$.subscribe((e) => e.type === 'call.admitted' && resolve()));
    const settled = new Promise((resolve) => s.ledger.events$.subscribe((e) => e.type === 'call.failed' && resolve(e)));
    const call = client.callTool({ name: 'notes.wait', arguments: {} }, undefined, { signal: cancel.signal });
    await admitted;
    cancel.abort();
    await expect(call).rejects.toThrow();
    expect(await settled).toMatchObject({ type: 'call.failed', tool: 'notes.wait', cancelled: true });
    await client.close();
  });

  it('makes the server refuse tools registered around the ledger', async () => {
    const s = await setup();
    expect(() => s.server.registerTool('bypass', {}, () => ({ content: [] }))).toThrow();
  });

  it('refuses to guard a server that already serves tools of its own', () => {
    const server = new McpServer({ name: 'host', version: '1.0.0' });
    server.registerTool('own', {}, () => ({ content: [] }));
    expect(() => ledgerMcpTools(server, createLedger())).toThrow(/already serves tools/);
  });
});

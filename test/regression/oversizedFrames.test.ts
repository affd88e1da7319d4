import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createLedger, sqliteStore, verify, type LedgerEvent } from '../../src';
import { BoundedReadBuffer, boundStdioFrames, frameBytesMax, type OversizedFrame } from '../../src/integrations/mcp/boundedFrames';
import { FrameSniffer } from '../../src/integrations/mcp/frameSniffer';
import { hostileServer, proxyClient, tempDir, writeJson, type ProxyClient } from '../support/mcpProxy';

// Regression (issue 30, defect 8): a message over 10 MiB from either side made the SDK's stdio
// transport close, so the proxy exited 0 with nothing on stderr, leaving calls in flight unanswered
// and logged `cancelled: true`. Now that one message is refused and the proxy keeps serving.

const overBound = frameBytesMax + 1024;
const text = (result: unknown): string => ((result as CallToolResult).content[0] as { text: string }).text;

function logEvents(file: string): LedgerEvent[] {
  const ledger = createLedger({ store: sqliteStore({ path: file, readonly: true }) });
  const events = [...ledger.events()];
  void ledger.close();
  return events;
}

describe('regression: oversized frames through atc proxy', () => {
  let tmp: ReturnType<typeof tempDir>;
  let proxy: ProxyClient;
  let ledger: string;
  beforeAll(async () => {
    tmp = tempDir();
    ledger = tmp.file('ledger.sqlite');
    const policy = writeJson(tmp.file('policy.json'), { tools: ['echo', 'huge', 'huge_notification', 'huge_request'], expiresIn: '1h', budget: { calls: 100, inputBytes: 1_000_000 } });
    proxy = await proxyClient(['--ledger', ledger, '--policy', policy, '--', process.execPath, hostileServer]);
  });
  afterAll(async () => {
    await proxy.close();
    tmp.cleanup();
  });

  it('fails the one call whose upstream result is over the bound (call.failed, not cancelled), and keeps serving', async () => {
    const error = await proxy.client.callTool({ name: 'huge', arguments: {} }).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).message).toMatch(/over 10485760 bytes/);
    expect(text(await proxy.client.callTool({ name: 'echo', arguments: { text: 'still here' } }))).toBe('still here');
    const settled = logEvents(ledger).filter((e) => e.type === 'call.failed' || e.type === 'call.completed');
    expect(settled.map((e) => [e.type, (e as { cancelled?: boolean }).cancelled ?? false])).toEqual([
      ['call.failed', false],
      ['call.completed', false],
    ]);
    expect(proxy.stderr()).toMatch(/refused a message of \d+ bytes from the upstream \(over the 10485760-byte limit\): the request \d+ it answered fails/);
  });

  it('answers a client request over the bound with a JSON-RPC error, logs nothing for it, and keeps serving', async () => {
    const before = logEvents(ledger).length;
    const error = await proxy.client.callTool({ name: 'echo', arguments: { text: 'x'.repeat(overBound) } }).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32600);
    expect(logEvents(ledger)).toHaveLength(before);
    expect(text(await proxy.client.callTool({ name: 'echo', arguments: { text: 'after' } }))).toBe('after');
    expect(proxy.stderr()).toMatch(/refused a message of \d+ bytes from the client .*: request \d+ answered with an error/);
  });

  it('drops an upstream notification over the bound; the call it came with completes', async () => {
    expect(text(await proxy.client.callTool({ name: 'huge_notification', arguments: {} }))).toBe('after the notification');
    expect(proxy.stderr()).toMatch(/dropped a message of \d+ bytes from the upstream .*: a notification/);
  });

  it('answers an upstream request over the bound with an error the upstream sees', async () => {
    expect(text(await proxy.client.callTool({ name: 'huge_request', arguments: {} }))).toBe('error -32600');
    expect(verify(logEvents(ledger)).ok).toBe(true);
  });
});

describe('BoundedReadBuffer and FrameSniffer', () => {
  it('replaces the read buffer of both SDK stdio transports (fails if an SDK release renames it)', () => {
    expect(boundStdioFrames(new StdioServerTransport(), 'the client', () => undefined)).toBe(true);
    expect(boundStdioFrames(new StdioClientTransport({ command: process.execPath }), 'the upstream', () => undefined)).toBe(true);
  });

  it('reads the lines around an oversized one, in order, in chunks of any size', () => {
    const seen: OversizedFrame[] = [];
    const buffer = new BoundedReadBuffer((f) => seen.push(f));
    const big = `{"result":{"text":"${'a'.repeat(overBound)}"},"jsonrpc":"2.0","id":7}`;
    const stream = Buffer.from(`{"jsonrpc":"2.0","method":"a"}\n${big}\n{"jsonrpc":"2.0","method":"b"}\n`);
    const methods: unknown[] = [];
    for (let i = 0; i < stream.length; i += 65_536) {
      buffer.append(stream.subarray(i, i + 65_536));
      for (let m = buffer.readMessage(); m !== null; m = buffer.readMessage()) methods.push((m as { method: string }).method);
    }
    expect(methods).toEqual(['a', 'b']);
    expect(seen).toEqual([{ id: 7, kind: 'response', bytes: Buffer.byteLength(big) }]);
  });

  it.each([
    ['a request, id first', '{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{}}', { id: 12, kind: 'request' }],
    ['a response, id last', '{"result":{"id":1,"method":"x"},"jsonrpc":"2.0","id":"r-9"}', { id: 'r-9', kind: 'response' }],
    ['a notification', '{"method":"notifications/message","params":{"id":3}}', { id: undefined, kind: 'notification' }],
    ['an escaped quote in a string id', '{"id":"a\\"b","method":"m"}', { id: 'a"b', kind: 'request' }],
    ['"id" inside a string value', '{"method":"m","params":"\\",\\"id\\":5"}', { id: undefined, kind: 'notification' }],
    ['an object as id', '{"id":{"n":1},"method":"m"}', { id: undefined, kind: 'notification' }],
    ['a fractional id', '{"id":1.5}', { id: undefined, kind: 'unknown' }],
    ['a batch', '[{"id":1,"method":"m"}]', { id: undefined, kind: 'unknown' }],
    ['not JSON', 'garbage "id":1', { id: undefined, kind: 'unknown' }],
    ['spaces around the id', '{ "id" : 4 , "method" : "m" }', { id: 4, kind: 'request' }],
  ])('FrameSniffer reads %s', (_label, text, gist) => {
    const sniffer = new FrameSniffer();
    for (const byte of Buffer.from(text)) sniffer.feed(Uint8Array.of(byte));
    expect(sniffer.gist()).toEqual(gist);
  });
});

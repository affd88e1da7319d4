import fs from 'node:fs';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { atc, httpServer, serverLog, tempDir, toolCallsSeen, writeJson } from '../support/mcpProxy';
import { gatewayClient, initializeBody, rawRequest, startGatewayProcess, stdioUpstream, type GatewayProcess } from '../support/gateway';

// `atc gateway` with capability tokens (auth.tokens), real processes end to end: the official SDK
// client → the built gateway → a stdio test upstream (shared) and an HTTP one (a session each).
jest.setTimeout(60_000);

const tmp = tempDir();
const stdioLog = tmp.file('stdio.jsonl');
const httpLog = tmp.file('http.jsonl');
const ledgerFile = tmp.file('gateway.sqlite');
let search: Awaited<ReturnType<typeof httpServer>>;
let gateway: GatewayProcess;
const clients: Client[] = [];

function issue(policy: object): { grantId: string; token: string } {
  const file = writeJson(tmp.file(`policy-${Math.random().toString(36).slice(2)}.json`), policy);
  const issued = atc(['issue', '--ledger', ledgerFile, '--policy', file]);
  if (issued.status !== 0) throw new Error(issued.stderr);
  return JSON.parse(issued.stdout) as { grantId: string; token: string };
}

async function connect(token: string | undefined): Promise<Client> {
  const client = await gatewayClient(gateway.url, token);
  clients.push(client);
  return client;
}

function text(result: unknown): string {
  const content = (result as CallToolResult).content[0];
  return content?.type === 'text' ? content.text : '';
}

beforeAll(async () => {
  search = await httpServer(httpLog);
  gateway = await startGatewayProcess(tmp.file('gateway.json'), {
    ledger: './gateway.sqlite',
    listen: '127.0.0.1:0',
    publicUrl: 'http://127.0.0.1:0/mcp',
    upstreams: { files: stdioUpstream(stdioLog), search: { url: search.url } },
    auth: { tokens: true },
    limits: { callsInFlightPerSessionMax: 1, requestBytesMax: 65_536 },
  });
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  if (gateway.child.exitCode === null) await gateway.stop();
  search.stop();
  tmp.cleanup();
});

test('tools/list shows, under prefixed names, only what the grant may call', async () => {
  const { token } = issue({ tools: ['files__echo', 'search__echo'], budget: { calls: 10, inputBytes: 10_000 }, expiresIn: '1h' });
  const client = await connect(token);
  const names = (await client.listTools()).tools.map((t) => t.name).sort();
  expect(names).toEqual(['files__echo', 'search__echo']);
});

test('many concurrent sessions on one grant: exactly the budget reaches the upstreams', async () => {
  const { token } = issue({ tools: ['files__echo', 'search__echo'], budget: { calls: 7, inputBytes: 100_000 }, expiresIn: '1h' });
  const before = toolCallsSeen(stdioLog, 'echo').length + toolCallsSeen(httpLog, 'echo').length;
  const agents = await Promise.all(Array.from({ length: 8 }, () => connect(token)));
  // Eight sessions at once, each with one call in flight at a time (the limit this gateway runs with).
  const sequential = async (client: Client, i: number): Promise<CallToolResult[]> => {
    const out: CallToolResult[] = [];
    for (let j = 0; j < 3; j++) out.push((await client.callTool({ name: i % 2 === 0 ? 'files__echo' : 'search__echo', arguments: { text: `a${i}-${j}` } })) as CallToolResult);
    return out;
  };
  const results = (await Promise.all(agents.map(sequential))).flat();
  const completed = results.filter((r) => r.isError !== true);
  const exhausted = results.filter((r) => (r._meta as Record<string, unknown> | undefined)?.['atc/reason'] === 'call_budget_exhausted');
  expect(completed).toHaveLength(7);
  expect(exhausted).toHaveLength(24 - 7);
  const after = toolCallsSeen(stdioLog, 'echo').length + toolCallsSeen(httpLog, 'echo').length;
  expect(after - before).toBe(7);
});

test('a call outside the grant is rejected as atc proxy rejects it, and never reaches the upstream', async () => {
  const { token } = issue({ tools: ['files__echo'], budget: { calls: 5, inputBytes: 10_000 }, expiresIn: '1h' });
  const client = await connect(token);
  const result = await client.callTool({ name: 'files__delete_all', arguments: {} });
  expect(result.isError).toBe(true);
  expect(text(result)).toMatch(/^rejected: tool_not_granted/);
  expect(result._meta).toMatchObject({ 'atc/reason': 'tool_not_granted' });
  expect(toolCallsSeen(stdioLog, 'delete_all')).toHaveLength(0);
});

test('no agent credential reaches an upstream: no header, argument or environment carries it', async () => {
  const { token } = issue({ tools: ['files__echo', 'search__echo'], budget: { calls: 5, inputBytes: 10_000 }, expiresIn: '1h' });
  const client = await connect(token);
  expect(text(await client.callTool({ name: 'search__echo', arguments: { text: 'over http' } }))).toBe('over http');
  expect(text(await client.callTool({ name: 'files__echo', arguments: { text: 'over stdio' } }))).toBe('over stdio');
  const seen = fs.readFileSync(stdioLog, 'utf8') + fs.readFileSync(httpLog, 'utf8');
  expect(seen).not.toContain(token);
  expect(seen.toLowerCase()).not.toContain('bearer');
  const headers = serverLog(httpLog).filter((r) => r.kind === 'http').map((r) => r.headers as Record<string, string>);
  expect(headers.length).toBeGreaterThan(0);
  for (const h of headers) expect(h.authorization).toBeUndefined();
});

test('a session belongs to the credential that opened it: another or none is refused, nothing forwarded', async () => {
  const alice = issue({ tools: ['files__echo'], budget: { calls: 5, inputBytes: 10_000 }, expiresIn: '1h' });
  const mallory = issue({ tools: ['files__echo'], budget: { calls: 5, inputBytes: 10_000 }, expiresIn: '1h' });
  const opened = await rawRequest(gateway.url, { headers: { authorization: `Bearer ${alice.token}` }, body: initializeBody });
  expect(opened.status).toBe(200);
  const sessionId = opened.headers['mcp-session-id'] as string;
  const call = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'files__echo', arguments: { text: 'hijacked' } } });
  const base = { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' };
  const other = await rawRequest(gateway.url, { headers: { ...base, authorization: `Bearer ${mallory.token}` }, body: call });
  const none = await rawRequest(gateway.url, { headers: base, body: call });
  expect(other.status).toBe(403);
  expect(none.status).toBe(401);
  expect(toolCallsSeen(stdioLog, 'echo').some((r) => JSON.stringify(r).includes('hijacked'))).toBe(false);
});

test('no or bad credential: 401 with the RFC 9728 challenge; the metadata is served', async () => {
  const none = await rawRequest(gateway.url, { body: initializeBody });
  expect(none.status).toBe(401);
  const metadataUrl = `${gateway.url.origin}/.well-known/oauth-protected-resource/mcp`;
  expect(none.headers['www-authenticate']).toBe(`Bearer resource_metadata="${metadataUrl}"`);
  const bad = await rawRequest(gateway.url, { headers: { authorization: 'Bearer atc_not-a-token' }, body: initializeBody });
  expect(bad.status).toBe(401);
  expect(bad.headers['www-authenticate']).toContain('error="invalid_token"');
  const metadata = await fetch(metadataUrl);
  expect(metadata.status).toBe(200);
  expect(await metadata.json()).toEqual({ resource: gateway.url.href, bearer_methods_supported: ['header'] });
});

test('a revoked token is 401 invalid_token, on a new session and on its open one', async () => {
  const { grantId, token } = issue({ tools: ['files__echo'], budget: { calls: 5, inputBytes: 10_000 }, expiresIn: '1h' });
  const client = await connect(token);
  expect(atc(['revoke', '--ledger', ledgerFile, grantId]).status).toBe(0);
  const fresh = await rawRequest(gateway.url, { headers: { authorization: `Bearer ${token}` }, body: initializeBody });
  expect(fresh.status).toBe(401);
  expect(fresh.headers['www-authenticate']).toContain('error="invalid_token"');
  await expect(client.listTools()).rejects.toThrow();
});

test('Host other than the listen address or publicUrl, or a foreign Origin: 403', async () => {
  const { token } = issue({ tools: ['files__echo'], budget: { calls: 5, inputBytes: 10_000 }, expiresIn: '1h' });
  const auth = { authorization: `Bearer ${token}` };
  const rebound = await rawRequest(gateway.url, { headers: { ...auth, host: `evil.example:${gateway.url.port}` }, body: initializeBody });
  const origin = await rawRequest(gateway.url, { headers: { ...auth, origin: 'https://evil.example' }, body: initializeBody });
  const own = await rawRequest(gateway.url, { headers: { ...auth, origin: gateway.url.origin }, body: initializeBody });
  expect(rebound.status).toBe(403);
  expect(origin.status).toBe(403);
  expect(own.status).toBe(200);
});

test('limits: a body over requestBytesMax is 413; a call over callsInFlightPerSessionMax is a JSON-RPC error, not forwarded', async () => {
  const { token } = issue({ tools: ['files__echo', 'files__slow'], budget: { calls: 10, inputBytes: 1_000_000 }, expiresIn: '1h' });
  const big = await rawRequest(gateway.url, { headers: { authorization: `Bearer ${token}` }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { pad: 'x'.repeat(70_000) } }) });
  expect(big.status).toBe(413);
  const client = await connect(token);
  const slowBefore = toolCallsSeen(stdioLog, 'slow').length;
  const controller = new AbortController();
  const slow = client.callTool({ name: 'files__slow', arguments: {} }, undefined, { signal: controller.signal }).catch((e: unknown) => e);
  // The upstream's own log says when the slow call is running.
  for (let i = 0; toolCallsSeen(stdioLog, 'slow').length === slowBefore && i < 500; i++) await new Promise((r) => setTimeout(r, 20));
  const echoBefore = toolCallsSeen(stdioLog, 'echo').length;
  await expect(client.callTool({ name: 'files__echo', arguments: { text: 'second' } })).rejects.toThrow(/calls in flight/);
  expect(toolCallsSeen(stdioLog, 'echo').length).toBe(echoBefore);
  controller.abort();
  await slow;
});

test('GET /healthz needs no credential and says only up, or down (503) once an upstream is gone', async () => {
  const health = await fetch(new URL('/healthz', gateway.url));
  expect(health.status).toBe(200);
  expect(await health.json()).toEqual({ status: 'up' });
  search.stop();
  // The answer is cached for a second: ask until it changes (bounded).
  let down: Response | undefined;
  for (let i = 0; i < 100 && down?.status !== 503; i++) {
    down = await fetch(new URL('/healthz', gateway.url));
    if (down.status !== 503) await new Promise((r) => setTimeout(r, 100));
  }
  expect(down?.status).toBe(503);
  expect(await down?.json()).toEqual({ status: 'down' });
});

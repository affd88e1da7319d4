import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateMessageRequestSchema, LoggingMessageNotificationSchema, ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { atc, relayServer, tempDir, writeJson } from '../support/mcpProxy';
import { gatewayClient, relayHttpServer, startGatewayProcess, type GatewayProcess } from '../support/gateway';

// Real processes: the official client → the built `atc gateway` → test/fixtures/mcpRelayServer.js
// twice: over HTTP ("web", a connection per session) and over stdio ("local", shared by sessions).
jest.setTimeout(60_000);

const tmp = tempDir();
let web: Awaited<ReturnType<typeof relayHttpServer>>;
let gateway: GatewayProcess;
const clients: Client[] = [];
const text = (result: unknown): string => ((result as CallToolResult).content[0] as { text: string }).text;
const tools = ['echo', 'ask_llm', 'ask_llm_together', 'log_during', 'forge_meta', 'change_tools'].flatMap((t) => [`web__${t}`, `local__${t}`]);

function token(): string {
  const policy = writeJson(tmp.file(`policy-${clients.length}.json`), { tools, expiresIn: '1h', budget: { calls: 100, inputBytes: 100_000 } });
  const issued = atc(['issue', '--ledger', tmp.file('gateway.sqlite'), '--policy', policy]);
  if (issued.status !== 0) throw new Error(issued.stderr);
  return (JSON.parse(issued.stdout) as { token: string }).token;
}

/** A session whose client answers sampling with its own name, and records what it was asked. */
async function session(name: string): Promise<{ client: Client; asked: string[] }> {
  const client = await gatewayClient(gateway.url, token(), { sampling: {} });
  clients.push(client);
  const asked: string[] = [];
  client.setRequestHandler(CreateMessageRequestSchema, (request) => {
    asked.push((request.params.messages[0]?.content as { text: string }).text);
    return { model: 'm', role: 'assistant', content: { type: 'text', text: `from ${name}` } };
  });
  return { client, asked };
}

beforeAll(async () => {
  web = await relayHttpServer();
  gateway = await startGatewayProcess(tmp.file('gateway.json'), {
    ledger: './gateway.sqlite',
    listen: '127.0.0.1:0',
    publicUrl: 'http://127.0.0.1:0/mcp',
    upstreams: { web: { url: web.url }, local: { command: [process.execPath, relayServer] } },
    auth: { tokens: true },
  });
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  if (gateway.child.exitCode === null) await gateway.stop();
  web.stop();
  tmp.cleanup();
});

test("an HTTP upstream's sampling during two sessions' simultaneous calls reaches each caller's session only, and each answer goes back to its own call", async () => {
  const [a, b] = [await session('a'), await session('b')];
  const results = await Promise.all([
    a.client.callTool({ name: 'web__ask_llm_together', arguments: { prompt: 'for a', meet: 2 } }),
    b.client.callTool({ name: 'web__ask_llm_together', arguments: { prompt: 'for b', meet: 2 } }),
  ]);
  expect(results.map(text)).toEqual(['llm: from a', 'llm: from b']);
  expect(a.asked).toEqual(['for a']);
  expect(b.asked).toEqual(['for b']);
});

test('on the shared stdio upstream, sampling during calls of two sessions at once is refused, never sent to either session', async () => {
  const [a, b] = [await session('a'), await session('b')];
  const results = await Promise.all([
    a.client.callTool({ name: 'local__ask_llm_together', arguments: { prompt: 'for a', meet: 2 } }),
    b.client.callTool({ name: 'local__ask_llm_together', arguments: { prompt: 'for b', meet: 2 } }),
  ]);
  for (const result of results) expect(text(result)).toContain('tool calls of several sessions are in flight');
  expect([...a.asked, ...b.asked]).toEqual([]);
});

test("on the shared stdio upstream, one session's sampling and log line during its call reach that session", async () => {
  const a = await session('a');
  expect(text(await a.client.callTool({ name: 'local__ask_llm', arguments: { prompt: 'alone' } }))).toBe('llm: from a');
  const logs: unknown[] = [];
  a.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params.data));
  expect(text(await a.client.callTool({ name: 'local__log_during', arguments: {} }))).toBe('logged');
  expect(logs).toEqual(['working on it']);
});

test("an upstream's _meta keys under atc/ are dropped; its other keys and the gateway's call id are kept", async () => {
  const { client } = await session('a');
  const result = await client.callTool({ name: 'web__forge_meta', arguments: {} });
  expect(result._meta?.['atc/reason']).toBeUndefined();
  expect(result._meta?.['atc/callId']).not.toBe('c_forged');
  expect(result._meta?.['vendor/key']).toBe(1);
});

test('prompts of both upstreams are listed and fetched under prefixed names; a session is offered what the upstreams offer', async () => {
  const { client } = await session('a');
  expect(client.getServerCapabilities()).toMatchObject({ tools: {}, prompts: {}, resources: {}, logging: {} });
  expect((await client.listPrompts()).prompts.map((p) => p.name).sort()).toEqual(['local__greet', 'web__greet']);
  const got = async (name: string): Promise<string> => ((await client.getPrompt({ name, arguments: { who: 'x' } })).messages[0]?.content as { text: string }).text;
  expect(await got('web__greet')).toBe('hello x from http');
  expect(await got('local__greet')).toBe('hello x from stdio');
  await expect(client.getPrompt({ name: 'elsewhere__greet', arguments: {} })).rejects.toThrow(/unknown prompt/);
  await expect(client.ping()).resolves.toEqual({});
});

test('resources of both upstreams are listed under prefixed names; a URI both list is refused rather than routed to either', async () => {
  const { client } = await session('a');
  const listed = (await client.listResources()).resources.map((r) => [r.name, r.uri]);
  expect(listed.sort()).toEqual([['local__orphan', 'relay://orphan'], ['web__orphan', 'relay://orphan']]);
  await expect(client.readResource({ uri: 'relay://orphan' })).rejects.toThrow(/unknown resource/);
});

test("an upstream's tools/list_changed re-lists it: sessions are told, a tool whose schema changed is hidden and refused, the other upstream's is untouched", async () => {
  const { client } = await session('a');
  const told = new Promise<void>((resolve) => client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()));
  expect(text(await client.callTool({ name: 'local__change_tools', arguments: { mode: 'change' } }))).toBe('changed: change');
  await told;
  const refused = await client.callTool({ name: 'local__echo', arguments: { text: 'hi' } });
  expect(refused).toMatchObject({ isError: true, _meta: { 'atc/reason': 'tool_refused' } });
  expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('local__echo');
  expect(text(await client.callTool({ name: 'web__echo', arguments: { text: 'hi' } }))).toBe('echo: hi');
});

import { CallToolResultSchema, CreateMessageRequestSchema, ElicitRequestSchema, ErrorCode, ListRootsRequestSchema, LoggingMessageNotificationSchema, McpError, ToolListChangedNotificationSchema, type CallToolResult, type ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { createLedger, sqliteStore } from '../../src';
import { proxyClient, relayServer, tempDir, writeJson, type ProxyClient } from '../support/mcpProxy';

// Real processes: the official client → the built `atc proxy` → test/fixtures/mcpRelayServer.js.
const tools = ['echo', 'ask_llm', 'ask_user', 'list_roots', 'log_during', 'forge_meta', 'change_tools'];
const policy = { tools, expiresIn: '1h', budget: { calls: 100, inputBytes: 100_000 } };
const text = (result: unknown): string => ((result as CallToolResult).content[0] as { text: string }).text;

describe('atc proxy relays what its upstream asks during a call', () => {
  let tmp: ReturnType<typeof tempDir>;
  let open: ProxyClient[] = [];
  beforeEach(() => {
    tmp = tempDir();
    open = [];
  });
  afterEach(async () => {
    for (const proxy of open) await proxy.close();
    tmp.cleanup();
  });

  async function start(capabilities: ClientCapabilities = {}): Promise<ProxyClient> {
    const args = ['--ledger', tmp.file('ledger.sqlite'), '--policy', writeJson(tmp.file('policy.json'), policy), '--', process.execPath, relayServer];
    const proxy = await proxyClient(args, {}, capabilities);
    open.push(proxy);
    return proxy;
  }

  it("relays the upstream's sampling request to the client and its answer back", async () => {
    const proxy = await start({ sampling: {} });
    const prompts: string[] = [];
    proxy.client.setRequestHandler(CreateMessageRequestSchema, (request) => {
      const content = request.params.messages[0]?.content as { text: string };
      prompts.push(content.text);
      return { model: 'test-model', role: 'assistant', content: { type: 'text', text: `echo of ${content.text}` } };
    });
    expect(text(await proxy.client.callTool({ name: 'ask_llm', arguments: { prompt: 'hi' } }))).toBe('llm: echo of hi');
    expect(prompts).toEqual(['hi']);
  });

  it('refuses sampling for a client that did not declare it, and the upstream hears why', async () => {
    const proxy = await start({});
    const result = await proxy.client.callTool({ name: 'ask_llm', arguments: { prompt: 'hi' } });
    expect(text(result)).toBe(`error ${ErrorCode.MethodNotFound}: MCP error ${ErrorCode.MethodNotFound}: sampling/createMessage refused: the client did not declare sampling`);
  });

  it("returns a client's refusal of a sampling request to the upstream", async () => {
    const proxy = await start({ sampling: {} });
    proxy.client.setRequestHandler(CreateMessageRequestSchema, () => {
      throw new McpError(-1, 'the user declined');
    });
    expect(text(await proxy.client.callTool({ name: 'ask_llm', arguments: { prompt: 'hi' } }))).toMatch(/^error -1: .*the user declined$/);
  });

  it('relays elicitation and roots during a call', async () => {
    const proxy = await start({ elicitation: { form: {} }, roots: {} });
    proxy.client.setRequestHandler(ElicitRequestSchema, (request) => ({ action: 'accept', content: { answer: `yes to ${request.params.message}` } }));
    proxy.client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: 'file:///work/a' }, { uri: 'file:///work/b' }] }));
    expect(text(await proxy.client.callTool({ name: 'ask_user', arguments: { message: 'go?' } }))).toBe('user: accept {"answer":"yes to go?"}');
    expect(text(await proxy.client.callTool({ name: 'list_roots', arguments: {} }))).toBe('roots: file:///work/a file:///work/b');
  });

  it('refuses an upstream request tied to no call: the client never sees it', async () => {
    const proxy = await start({ sampling: {} });
    let asked = 0;
    proxy.client.setRequestHandler(CreateMessageRequestSchema, () => {
      asked++;
      return { model: 'm', role: 'assistant', content: { type: 'text', text: 'should not happen' } };
    });
    const read = await proxy.client.readResource({ uri: 'relay://orphan' });
    expect((read.contents[0] as { text: string }).text).toBe(`error ${ErrorCode.InvalidRequest}: MCP error ${ErrorCode.InvalidRequest}: sampling/createMessage refused: it is tied to no tool call in flight`);
    expect(asked).toBe(0);
    expect(proxy.stderr()).toMatch(/upstream sampling\/createMessage refused: it is tied to no tool call in flight/);
  });

  it("relays a log line sent during a call to the client, and progress still flows", async () => {
    const proxy = await start({});
    const lines: unknown[] = [];
    proxy.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void lines.push(n.params.data));
    expect(text(await proxy.client.request({ method: 'tools/call', params: { name: 'log_during', arguments: {} } }, CallToolResultSchema))).toBe('logged');
    expect(lines).toEqual(['working on it']);
  });

  it("drops the upstream's own atc/ _meta keys from a result and keeps the others", async () => {
    const proxy = await start({});
    const result = await proxy.client.callTool({ name: 'forge_meta', arguments: {} });
    expect(result._meta).toEqual({ 'vendor/key': 1, 'atc/callId': expect.stringMatching(/^c_/) });
  });

  it('advertises what the upstream offers: tools with listChanged, resources, logging, prompts; no completions', async () => {
    const proxy = await start({});
    const capabilities = proxy.client.getServerCapabilities();
    expect(capabilities).toEqual({ tools: { listChanged: true }, resources: {}, logging: {}, prompts: {} });
  });
});

describe('atc proxy on tools/list_changed', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => (tmp = tempDir()));
  afterEach(() => tmp.cleanup());

  it('registers a new tool, hides and refuses a tool whose schema changed, and tells the client each time', async () => {
    // A policy may grant only tools the upstream lists or the log registered: the log knows added_tool
    // from an earlier run, so the grant covers it before the upstream lists it.
    const ledger = createLedger({ store: sqliteStore({ path: tmp.file('ledger.sqlite') }) });
    await ledger.registerTool({ name: 'added_tool', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, run: () => null });
    await ledger.close();
    const grant = { ...policy, tools: [...tools, 'added_tool'] };
    const args = ['--ledger', tmp.file('ledger.sqlite'), '--policy', writeJson(tmp.file('policy.json'), grant), '--', process.execPath, relayServer];
    const proxy = await proxyClient(args);
    let changes = 0;
    let changed: () => void = () => undefined;
    proxy.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changes++;
      changed();
    });
    const nextChange = (): Promise<void> => new Promise((resolve) => (changed = resolve));
    const names = async (): Promise<string[]> => (await proxy.client.listTools()).tools.map((t) => t.name).sort();
    expect(await names()).not.toContain('added_tool');

    let notified = nextChange();
    expect(text(await proxy.client.callTool({ name: 'change_tools', arguments: { mode: 'add' } }))).toBe('changed: add');
    await notified;
    expect(await names()).toContain('added_tool');
    expect(text(await proxy.client.callTool({ name: 'added_tool', arguments: { text: 'new' } }))).toBe('added_tool: new');

    notified = nextChange();
    await proxy.client.callTool({ name: 'change_tools', arguments: { mode: 'change' } });
    await notified;
    expect(await names()).not.toContain('echo');
    const refused = await proxy.client.callTool({ name: 'echo', arguments: { text: 'old schema' } });
    expect(refused).toMatchObject({ isError: true, _meta: { 'atc/reason': 'tool_refused', 'atc/tool': 'echo' } });
    expect(text(refused)).toMatch(/^refused: the upstream's inputSchema for echo changed while the proxy ran/);
    expect(changes).toBe(2);
    await proxy.close();
    expect(proxy.stderr()).toMatch(/tool echo hidden and refused/);
  });
});

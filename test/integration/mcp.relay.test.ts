import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CompleteRequestSchema,
  CreateMessageResultSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListRootsResultSchema,
  ListToolsRequestSchema,
  type ClientCapabilities,
  type ServerNotification,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { createLedger } from '../../src';
import { CallRouter, type CallLink, type RelaySession } from '../../src/integrations/mcp/relay/callRouter';
import { relayDownstreamRequests, type PromptNaming } from '../../src/integrations/mcp/relay/forwarding';
import { changedSchemaRefusal, toolListWatch, unlistedRefusal } from '../../src/integrations/mcp/relay/toolList';
import { relayUpstreamNotifications } from '../../src/integrations/mcp/relay/upstreamNotifications';
import { relayedClientCapabilities, relayedRequestsMax, relayUpstreamRequests } from '../../src/integrations/mcp/relay/upstreamRequests';
import { ResourceMapping } from '../../src/integrations/mcp/resourceMapping';
import { registerUpstreamTools } from '../../src/integrations/mcp/upstreamTools';

// The relay modules between an upstream server (the SDK's Server) and the relay's upstream client,
// linked in memory; the downstream side is a CallLink whose answers the test controls.

async function linked(upstream: Server, capabilities: ClientCapabilities = relayedClientCapabilities): Promise<Client> {
  const client = new Client({ name: 'relay', version: '1' }, { capabilities });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await upstream.connect(b);
  await client.connect(a);
  return client;
}

const session = (id: string, capabilities: ClientCapabilities): RelaySession => ({ id, clientCapabilities: () => capabilities });
const sampling = { method: 'sampling/createMessage' as const, params: { messages: [{ role: 'user' as const, content: { type: 'text' as const, text: 'q' } }], maxTokens: 5 } };
const answer = { model: 'm', role: 'assistant', content: { type: 'text', text: 'a' } };

function answering(s: RelaySession, asked: string[] = []): CallLink {
  return {
    session: s,
    sendRequest: (async (request: { method: string }) => {
      asked.push(request.method);
      return request.method === 'roots/list' ? { roots: [] } : answer;
    }) as unknown as CallLink['sendRequest'],
    sendNotification: async () => undefined,
  };
}

describe('upstream requests through the relay', () => {
  it("reaches the one session's call and carries its answer back", async () => {
    const upstream = new Server({ name: 'up', version: '1' }, { capabilities: {} });
    const router = new CallRouter();
    relayUpstreamRequests({ upstream: await linked(upstream), router });
    const asked: string[] = [];
    router.enter(answering(session('a', { sampling: {}, roots: {} }), asked));
    expect(await upstream.request(sampling, CreateMessageResultSchema)).toMatchObject({ content: { text: 'a' } });
    expect(await upstream.request({ method: 'roots/list' }, ListRootsResultSchema)).toEqual({ roots: [] });
    expect(asked).toEqual(['sampling/createMessage', 'roots/list']);
  });

  it('refuses while calls of two sessions are in flight: neither session is asked', async () => {
    const upstream = new Server({ name: 'up', version: '1' }, { capabilities: {} });
    const router = new CallRouter();
    const lines: string[] = [];
    relayUpstreamRequests({ upstream: await linked(upstream), router, report: (l) => void lines.push(l) });
    const asked: string[] = [];
    router.enter(answering(session('a', { sampling: {} }), asked));
    router.enter(answering(session('b', { sampling: {} }), asked));
    await expect(upstream.request(sampling, CreateMessageResultSchema)).rejects.toMatchObject({ code: ErrorCode.InvalidRequest, message: expect.stringContaining('several sessions') });
    expect(asked).toEqual([]);
    expect(lines).toEqual(['upstream sampling/createMessage refused: tool calls of several sessions are in flight, so it cannot be tied to one']);
  });

  it('refuses what the session did not declare: roots, URL elicitation, sampling with tools', async () => {
    const upstream = new Server({ name: 'up', version: '1' }, { capabilities: {} });
    const router = new CallRouter();
    relayUpstreamRequests({ upstream: await linked(upstream), router });
    router.enter(answering(session('a', { sampling: {}, elicitation: { form: {} } })));
    await expect(upstream.request({ method: 'roots/list' }, ListRootsResultSchema)).rejects.toMatchObject({ code: ErrorCode.MethodNotFound, message: expect.stringContaining('did not declare roots') });
    const url = { method: 'elicitation/create' as const, params: { mode: 'url' as const, message: 'open', url: 'https://example.com', elicitationId: 'e1' } };
    await expect(upstream.request(url, CreateMessageResultSchema)).rejects.toMatchObject({ code: ErrorCode.MethodNotFound, message: expect.stringContaining('did not declare elicitation.url') });
    const withTools = { ...sampling, params: { ...sampling.params, tools: [{ name: 't', inputSchema: { type: 'object' as const } }] } };
    await expect(upstream.request(withTools, CreateMessageResultSchema)).rejects.toMatchObject({ message: expect.stringContaining('did not declare sampling.tools') });
  });

  it(`refuses beyond ${relayedRequestsMax} requests waiting for the client at once`, async () => {
    const upstream = new Server({ name: 'up', version: '1' }, { capabilities: {} });
    const router = new CallRouter();
    relayUpstreamRequests({ upstream: await linked(upstream), router });
    const waiting: (() => void)[] = [];
    router.enter({
      session: session('a', { sampling: {} }),
      sendRequest: (() => new Promise((resolve) => waiting.push(() => resolve(answer)))) as unknown as CallLink['sendRequest'],
      sendNotification: async () => undefined,
    });
    const held = Array.from({ length: relayedRequestsMax }, () => upstream.request(sampling, CreateMessageResultSchema));
    while (waiting.length < relayedRequestsMax) await new Promise((resolve) => setImmediate(resolve));
    await expect(upstream.request(sampling, CreateMessageResultSchema)).rejects.toMatchObject({ message: expect.stringContaining(`more than ${relayedRequestsMax} requests`) });
    for (const release of waiting) release();
    await Promise.all(held);
  });
});

describe('upstream notifications through the relay', () => {
  it('sends a log line to the call in flight, to the audience with none, and drops it while two sessions have calls', async () => {
    const upstream = new Server({ name: 'up', version: '1' }, { capabilities: { logging: {}, tools: { listChanged: true } } });
    const router = new CallRouter();
    const toCall: unknown[] = [];
    const toAudience: unknown[] = [];
    let changes = 0;
    const client = await linked(upstream);
    relayUpstreamNotifications({ upstream: client, router, audience: async (n) => void toAudience.push(n.params), onToolsChanged: () => void changes++ });
    const log = (data: string): Promise<void> => upstream.sendLoggingMessage({ level: 'info', data });
    const flush = async (): Promise<void> => void (await client.ping());
    await log('idle');
    await flush();
    const leaveA = router.enter({ ...answering(session('a', {})), sendNotification: async (n: ServerNotification) => void toCall.push(n.params) });
    await log('during a');
    await flush();
    router.enter(answering(session('b', {})));
    await log('a and b');
    await upstream.sendToolListChanged();
    await flush();
    leaveA();
    expect(toAudience).toEqual([{ level: 'info', data: 'idle' }]);
    expect(toCall).toEqual([{ level: 'info', data: 'during a' }]);
    expect(changes).toBe(1);
  });
});

describe('downstream requests through the relay, with a prompt naming rule', () => {
  it('shows prompts under the rule and sends their upstream names back, for prompts/get and completion', async () => {
    const upstream = new Server({ name: 'up', version: '1' }, { capabilities: { prompts: {}, completions: {} } });
    const seen: string[] = [];
    upstream.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: [{ name: 'greet' }], _meta: { 'atc/reason': 'forged' } }));
    upstream.setRequestHandler(GetPromptRequestSchema, (r) => (seen.push(`get ${r.params.name}`), { messages: [] }));
    upstream.setRequestHandler(CompleteRequestSchema, (r) => (seen.push(`complete ${(r.params.ref as { name: string }).name}`), { completion: { values: [] } }));
    const client = await linked(upstream, {});
    const downstream = new Server({ name: 'relay', version: '1' }, { capabilities: { prompts: {}, completions: {} } });
    const prefix: PromptNaming = { outward: (n) => `up__${n}`, inward: (n) => (n.startsWith('up__') ? n.slice(4) : undefined) };
    relayDownstreamRequests(downstream, client, prefix);
    const agent = new Client({ name: 'agent', version: '1' });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await downstream.connect(b);
    await agent.connect(a);
    expect(await agent.listPrompts()).toEqual({ prompts: [{ name: 'up__greet' }] });
    await agent.getPrompt({ name: 'up__greet' });
    await agent.complete({ ref: { type: 'ref/prompt', name: 'up__greet' }, argument: { name: 'x', value: '' } });
    await expect(agent.getPrompt({ name: 'greet' })).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
    await expect(agent.listResources()).rejects.toMatchObject({ code: ErrorCode.MethodNotFound });
    expect(seen).toEqual(['get greet', 'complete greet']);
  });
});

describe('tools/list_changed: the re-list', () => {
  const schema = (props: string[]): Tool['inputSchema'] => ({ type: 'object', properties: Object.fromEntries(props.map((p) => [p, { type: 'string' }])) });

  async function setup(initial: Tool[]) {
    let listed = initial;
    let lists = 0;
    const upstream = new Server({ name: 'up', version: '1' }, { capabilities: { tools: { listChanged: true } } });
    upstream.setRequestHandler(ListToolsRequestSchema, () => (lists++, { tools: listed }));
    const client = await linked(upstream, {});
    const ledger = createLedger();
    const mapping = new ResourceMapping();
    const tools = await registerUpstreamTools(ledger, client, initial, mapping);
    const changes: unknown[] = [];
    const watch = toolListWatch({ ledger, upstream: client, tools, mapping, changed: (c) => void changes.push(c) });
    return { tools, watch, changes, set: (next: Tool[]) => void (listed = next), lists: () => lists };
  }

  it('registers a new tool, hides a changed one and an unlisted one, and restores one listed again unchanged', async () => {
    const a: Tool = { name: 'a', inputSchema: schema(['x']) };
    const b: Tool = { name: 'b', inputSchema: schema(['y']) };
    const s = await setup([a, b]);
    s.set([{ name: 'a', inputSchema: schema(['x', 'z']) }, { name: 'c', inputSchema: schema([]) }]);
    s.watch.notify();
    await s.watch.settled();
    expect([...s.tools.registered.keys()]).toEqual(['c']);
    expect(s.tools.refused).toEqual(new Map([['a', changedSchemaRefusal('a')], ['b', unlistedRefusal('b')]]));
    s.set([a, b, { name: 'c', inputSchema: schema([]) }]);
    s.watch.notify();
    await s.watch.settled();
    expect([...s.tools.registered.keys()].sort()).toEqual(['a', 'b', 'c']);
    expect(s.tools.refused.size).toBe(0);
    expect(s.changes).toEqual([
      { added: ['c'], hidden: ['a', 'b'], restored: [] },
      { added: [], hidden: [], restored: ['a', 'b'] },
    ]);
  });

  it('coalesces notifications that arrive during a re-list into one more', async () => {
    const s = await setup([{ name: 'a', inputSchema: schema([]) }]);
    s.watch.notify();
    s.watch.notify();
    s.watch.notify();
    await s.watch.settled();
    expect(s.lists()).toBe(2);
  });
});

import fs from 'node:fs';
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createLedger, sqliteStore, verify, type LedgerEvent } from '../../src';
import { atc, httpServer, loggingServer, proxyClient, serverLog, tempDir, toolCallsSeen, untilLogged, writeJson, type ProxyClient } from '../support/mcpProxy';

const policy = {
  tools: ['echo', 'write_note', 'read_notes', 'slow', 'progress', 'fail'],
  args: { echo: { properties: { text: { maxLength: 20 } } } },
  resources: { write_note: ['notes:/{path}'], read_notes: ['notes:/{paths[]}'] },
  scopes: ['notes:/drafts/'],
  expiresIn: '1h',
  budget: { calls: 1000, inputBytes: 1_000_000 },
};

function logEvents(file: string): LedgerEvent[] {
  const ledger = createLedger({ store: sqliteStore({ path: file, readonly: true }) });
  const events = [...ledger.events()];
  void ledger.close();
  return events;
}

const text = (result: unknown): string => ((result as CallToolResult).content[0] as { text: string }).text;

describe.each(['stdio', 'http'] as const)('atc proxy with an upstream over %s', (transport) => {
  let tmp: ReturnType<typeof tempDir>;
  let stops: (() => void)[] = [];
  const stopHttp = (stop: () => void): void => void stops.push(stop);
  beforeEach(() => {
    tmp = tempDir();
    stops = [];
  });
  afterEach(() => {
    for (const stop of stops) stop();
    tmp.cleanup();
  });

  async function upstreamArgs(log: string): Promise<string[]> {
    if (transport === 'stdio') return ['--', process.execPath, loggingServer, '--log', log];
    const server = await httpServer(log);
    stopHttp(server.stop);
    return ['--url', server.url];
  }

  async function start(options: { policy?: object; tokenEnv?: { name: string; token: string }; ledger?: string; quiet?: boolean } = {}): Promise<ProxyClient & { log: string; ledger: string }> {
    const log = tmp.file('server.jsonl');
    const ledger = options.ledger ?? tmp.file('ledger.sqlite');
    const grantArgs = options.tokenEnv !== undefined ? ['--token-env', options.tokenEnv.name] : ['--policy', writeJson(tmp.file('policy.json'), options.policy ?? policy)];
    const env = options.tokenEnv !== undefined ? { [options.tokenEnv.name]: options.tokenEnv.token } : {};
    const proxy = await proxyClient(['--ledger', ledger, ...grantArgs, ...(options.quiet === true ? ['--quiet'] : []), ...(await upstreamArgs(log))], env);
    return { ...proxy, log, ledger };
  }

  it('forwards an allowed call and returns the server result', async () => {
    const proxy = await start();
    const result = await proxy.client.callTool({ name: 'echo', arguments: { text: 'hello' } });
    expect(text(result)).toBe('hello');
    expect(result.isError).toBeFalsy();
    expect(toolCallsSeen(proxy.log, 'echo')).toHaveLength(1);
    await proxy.close();
  });

  it('lists only the tools the grant may call', async () => {
    const proxy = await start();
    const { tools } = await proxy.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...policy.tools].sort());
    expect(tools.find((t) => t.name === 'echo')?.inputSchema).toMatchObject({ properties: { text: { type: 'string' } } });
    await proxy.close();
  });

  it('answers every rejection as an isError result with its reason, and the server never sees those calls', async () => {
    const proxy = await start();
    const denied: [string, string, object][] = [
      ['tool_not_granted', 'delete_all', {}],
      ['argument_not_permitted', 'echo', { text: 'far longer than twenty characters' }],
      ['invalid_arguments', 'echo', { text: 42 }],
      ['resource_not_permitted', 'write_note', { path: 'private/a', text: 'x' }],
      ['invalid_resource', 'read_notes', { paths: ['drafts/a', 'drafts/../private/b'] }],
    ];
    for (const [reason, name, args] of denied) {
      const result = await proxy.client.callTool({ name, arguments: args as Record<string, unknown> });
      expect(result.isError).toBe(true);
      expect(text(result).startsWith(`rejected: ${reason}`)).toBe(true);
      expect(result._meta).toEqual({ 'atc/reason': reason, 'atc/callId': expect.stringMatching(/^c_/) });
    }
    expect(text(await proxy.client.callTool({ name: 'read_notes', arguments: { paths: ['drafts/a', 'drafts/b'] } }))).toBe('read 2');
    expect(toolCallsSeen(proxy.log).map((r) => r.message?.params?.name)).toEqual(['read_notes']);
    await proxy.close();
  });

  it('lets exactly 7 of 64 concurrent calls through against calls: 7', async () => {
    const proxy = await start({ policy: { ...policy, budget: { calls: 7, inputBytes: 1_000_000 } } });
    const results = await Promise.all(Array.from({ length: 64 }, (_, i) => proxy.client.callTool({ name: 'echo', arguments: { text: `n${i}` } })));
    expect(results.filter((r) => !r.isError)).toHaveLength(7);
    expect(results.filter((r) => r.isError && (r._meta as Record<string, unknown>)['atc/reason'] === 'call_budget_exhausted')).toHaveLength(57);
    expect(toolCallsSeen(proxy.log, 'echo')).toHaveLength(7);
    await proxy.close();
  });

  it("enforces the policy's rate window: the third call in the window is rate_limited with retryAfterMs, unseen by the server", async () => {
    const proxy = await start({ policy: { ...policy, budget: { calls: 100, inputBytes: 1_000_000, rate: { calls: 2, windowMs: 3_600_000 } } } });
    const results = [];
    for (const i of [1, 2, 3]) results.push(await proxy.client.callTool({ name: 'echo', arguments: { text: `r${i}` } }));
    expect(results.map((r) => r.isError === true)).toEqual([false, false, true]);
    expect(results[2]?._meta).toMatchObject({ 'atc/reason': 'rate_limited', 'atc/retryAfterMs': expect.any(Number) });
    expect(text(results[2])).toMatch(/^rejected: rate_limited/);
    expect(toolCallsSeen(proxy.log, 'echo')).toHaveLength(2);
    const rejected = logEvents(proxy.ledger).find((e) => e.type === 'call.rejected');
    expect(rejected).toMatchObject({ reason: 'rate_limited' });
    await proxy.close();
  });

  it('cancels a slow call: the server receives notifications/cancelled and the log settles it cancelled', async () => {
    const proxy = await start();
    const cancel = new AbortController();
    const call = proxy.client.callTool({ name: 'slow', arguments: {} }, undefined, { signal: cancel.signal });
    const records = await untilLogged(proxy.log, (rs) => rs.some((r) => r.message?.method === 'tools/call' && r.message.params?.name === 'slow'));
    const requestId = records.find((r) => r.message?.params?.name === 'slow')?.message?.id;
    cancel.abort();
    await expect(call).rejects.toThrow();
    await untilLogged(proxy.log, (rs) => rs.some((r) => r.message?.method === 'notifications/cancelled' && r.message.params?.requestId === requestId));
    await proxy.client.callTool({ name: 'echo', arguments: { text: 'next' } });
    await proxy.close();
    const failed = logEvents(proxy.ledger).filter((e) => e.type === 'call.failed');
    expect(failed).toEqual([expect.objectContaining({ tool: 'slow', cancelled: true })]);
  });

  it('relays progress from the server to the client', async () => {
    const proxy = await start();
    const seen: number[] = [];
    const result = await proxy.client.request({ method: 'tools/call', params: { name: 'progress', arguments: { steps: 3 } } }, CallToolResultSchema, { onprogress: (p) => void seen.push(p.progress) });
    expect(text(result)).toBe('progress done');
    expect(seen).toEqual([1, 2, 3]);
    await proxy.close();
  });

  it('returns an isError result from the server as it is and logs the call as failed', async () => {
    const proxy = await start();
    const result = await proxy.client.callTool({ name: 'fail', arguments: {} });
    expect(result).toMatchObject({ isError: true, content: [{ type: 'text', text: 'it broke' }] });
    await proxy.close();
    expect(logEvents(proxy.ledger).filter((e) => e.type === 'call.failed')).toEqual([expect.objectContaining({ tool: 'fail' })]);
  });

  it('forwards resources, prompts and ping', async () => {
    const proxy = await start();
    expect((await proxy.client.listResources()).resources).toEqual([expect.objectContaining({ uri: 'note://hello' })]);
    expect((await proxy.client.readResource({ uri: 'note://hello' })).contents).toEqual([expect.objectContaining({ text: 'hello from the server' })]);
    expect((await proxy.client.listPrompts()).prompts).toEqual([expect.objectContaining({ name: 'greet' })]);
    expect((await proxy.client.getPrompt({ name: 'greet' })).messages).toHaveLength(1);
    await proxy.client.ping();
    const methods = serverLog(proxy.log).map((r) => r.message?.method);
    expect(methods).toEqual(expect.arrayContaining(['resources/list', 'resources/read', 'prompts/list', 'prompts/get', 'ping']));
    await proxy.close();
  });

  it('stops the next call after a revocation from another process, and the log verifies', async () => {
    const ledger = tmp.file('ledger.sqlite');
    const issued = atc(['issue', '--ledger', ledger, '--policy', writeJson(tmp.file('p.json'), policy), '--', process.execPath, loggingServer, '--log', tmp.file('issue-server.jsonl')]);
    expect(issued.status).toBe(0);
    const { grantId, token } = JSON.parse(issued.stdout) as { grantId: string; token: string };
    const proxy = await start({ ledger, tokenEnv: { name: 'ATC_TEST_TOKEN', token } });
    expect(text(await proxy.client.callTool({ name: 'echo', arguments: { text: 'before' } }))).toBe('before');
    expect(atc(['revoke', '--ledger', ledger, grantId]).status).toBe(0);
    const after = await proxy.client.callTool({ name: 'echo', arguments: { text: 'after' } });
    expect(after._meta).toMatchObject({ 'atc/reason': 'revoked' });
    expect(toolCallsSeen(proxy.log, 'echo')).toHaveLength(1);
    expect((await proxy.client.listTools()).tools).toEqual([]);
    await proxy.close();
    const verified = atc(['verify', ledger]);
    expect(verified.status).toBe(0);
    expect(verify(logEvents(ledger)).ok).toBe(true);
  });

  it('aborts a running call when another process revokes with --abort', async () => {
    const ledger = tmp.file('ledger.sqlite');
    const issued = JSON.parse(atc(['issue', '--ledger', ledger, '--policy', writeJson(tmp.file('p.json'), policy), '--', process.execPath, loggingServer, '--log', tmp.file('issue-server.jsonl')]).stdout) as { grantId: string; token: string };
    const proxy = await start({ ledger, tokenEnv: { name: 'ATC_TEST_TOKEN', token: issued.token } });
    const call = proxy.client.callTool({ name: 'slow', arguments: {} });
    await untilLogged(proxy.log, (rs) => rs.some((r) => r.message?.params?.name === 'slow'));
    expect(atc(['revoke', '--ledger', ledger, issued.grantId, '--abort']).status).toBe(0);
    await expect(call).rejects.toThrow();
    await untilLogged(proxy.log, (rs) => rs.some((r) => r.message?.method === 'notifications/cancelled'));
    await proxy.close();
    expect(logEvents(ledger).filter((e) => e.type === 'call.failed')).toEqual([expect.objectContaining({ tool: 'slow' })]);
  });

  it('never passes the token upstream: not in its arguments, environment, headers or messages', async () => {
    const ledger = tmp.file('ledger.sqlite');
    const issued = JSON.parse(atc(['issue', '--ledger', ledger, '--policy', writeJson(tmp.file('p.json'), policy), '--', process.execPath, loggingServer, '--log', tmp.file('issue-server.jsonl')]).stdout) as { token: string };
    const proxy = await start({ ledger, tokenEnv: { name: 'ATC_TEST_TOKEN', token: issued.token } });
    await proxy.client.callTool({ name: 'echo', arguments: { text: 'x' } });
    await proxy.close();
    const raw = fs.readFileSync(proxy.log, 'utf8');
    expect(raw).toContain('"kind":"start"');
    expect(raw).not.toContain(issued.token);
    expect(raw).not.toContain('ATC_TEST_TOKEN');
    expect(proxy.stderr()).not.toContain(issued.token);
  });

  it('refuses a tool whose upstream schema changed since the log registered it', async () => {
    const ledger = tmp.file('ledger.sqlite');
    const first = atc(['issue', '--ledger', ledger, '--policy', writeJson(tmp.file('p.json'), policy), '--', process.execPath, loggingServer, '--log', tmp.file('issue-server.jsonl')]);
    expect(first.status).toBe(0);
    const log = tmp.file('v2.jsonl');
    const upstream = transport === 'stdio' ? ['--', process.execPath, loggingServer, '--log', log, '--echo-v2'] : ['--url', (await httpServer(log, ['--echo-v2']).then((s) => (stopHttp(s.stop), s))).url];
    const proxy = await proxyClient(['--ledger', ledger, '--policy', writeJson(tmp.file('p2.json'), { ...policy, tools: ['write_note'], args: {}, resources: {} }), ...upstream]);
    const result = await proxy.client.callTool({ name: 'echo', arguments: { text: 'x' } });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^refused: the upstream's inputSchema for echo changed since the log registered it/);
    expect((await proxy.client.listTools()).tools.map((t) => t.name)).toEqual(['write_note']);
    await proxy.close();
    expect(proxy.stderr()).toMatch(/tool echo refused: the upstream's inputSchema for echo changed/);
    expect(toolCallsSeen(log, 'echo')).toHaveLength(0);
  });

  it('prints one stderr line per decision without argument values, and none with --quiet', async () => {
    const proxy = await start();
    await proxy.client.callTool({ name: 'echo', arguments: { text: 'visible-value' } });
    await proxy.client.callTool({ name: 'echo', arguments: { text: 'a secret far longer than twenty' } });
    await proxy.close();
    const lines = proxy.stderr().split('\n').filter((l) => /^atc proxy: echo /.test(l));
    expect(lines).toEqual([expect.stringMatching(/^atc proxy: echo admitted, completed \(c_/), expect.stringMatching(/^atc proxy: echo rejected argument_not_permitted \(c_/)]);
    expect(proxy.stderr()).not.toContain('visible-value');
    expect(proxy.stderr()).not.toContain('secret');
    const quiet = await start({ quiet: true, ledger: tmp.file('quiet.sqlite') });
    await quiet.client.callTool({ name: 'echo', arguments: { text: 'x' } });
    await quiet.close();
    expect(quiet.stderr()).not.toMatch(/echo admitted/);
  });
});

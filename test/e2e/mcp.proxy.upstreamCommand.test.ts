import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { loggingServer, proxyClient, tempDir, toolCallsSeen, writeJson } from '../support/mcpProxy';

// Wrappers such as the MCP Inspector's `--cli` take `--` for themselves: the proxy must be able to
// start its upstream without it, from an option or from the policy file.
const policy = { tools: ['echo'], expiresIn: '1h', budget: { calls: 10, inputBytes: 10_000 } };
const text = (result: unknown): string => ((result as CallToolResult).content[0] as { text: string }).text;

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => (tmp = tempDir()));
afterEach(() => tmp.cleanup());

it('starts the upstream named by --upstream-command (no --) and forwards an allowed call', async () => {
  const log = tmp.file('server.jsonl');
  const proxy = await proxyClient(['--ledger', tmp.file('l.sqlite'), '--policy', writeJson(tmp.file('p.json'), policy), '--upstream-command', `${process.execPath} ${loggingServer} --log ${log}`]);
  expect(text(await proxy.client.callTool({ name: 'echo', arguments: { text: 'hi' } }))).toBe('hi');
  expect(toolCallsSeen(log, 'echo')).toHaveLength(1);
  await proxy.close();
});

it('starts the upstream named by the policy file\'s "upstream": { "command": [...] }', async () => {
  const log = tmp.file('server.jsonl');
  const withUpstream = { ...policy, upstream: { command: [process.execPath, loggingServer, '--log', log] } };
  const proxy = await proxyClient(['--ledger', tmp.file('l.sqlite'), '--policy', writeJson(tmp.file('p.json'), withUpstream)]);
  expect(text(await proxy.client.callTool({ name: 'echo', arguments: { text: 'hi' } }))).toBe('hi');
  expect(toolCallsSeen(log, 'echo')).toHaveLength(1);
  await proxy.close();
});

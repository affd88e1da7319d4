import fs from 'node:fs';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { atc, serverLog, tempDir, toolCallsSeen, untilLogged, writeJson } from '../support/mcpProxy';
import { gatewayClient, startGatewayProcess, stdioUpstream, type GatewayProcess } from '../support/gateway';

// A shared stdio upstream that dies mid-call: the call fails and is settled call.failed, health says
// down until the gateway has restarted the upstream, then calls work again.
jest.setTimeout(90_000);

const tmp = tempDir();
const log = tmp.file('upstream.jsonl');
const ledgerFile = tmp.file('gateway.sqlite');
let gateway: GatewayProcess;

beforeAll(async () => {
  gateway = await startGatewayProcess(tmp.file('gateway.json'), { ledger: './gateway.sqlite', listen: '127.0.0.1:0', publicUrl: 'http://127.0.0.1:0/mcp', upstreams: { files: stdioUpstream(log) }, auth: { tokens: true } });
});

afterAll(async () => {
  if (gateway.child.exitCode === null) await gateway.stop();
  tmp.cleanup();
});

const starts = (): { pid: number }[] => serverLog(log).filter((r) => r.kind === 'start') as unknown as { pid: number }[];

test('an upstream that exits fails its calls in flight (settled call.failed) and is restarted', async () => {
  const policy = writeJson(tmp.file('policy.json'), { tools: ['files__slow', 'files__echo'], budget: { calls: 10, inputBytes: 10_000 }, expiresIn: '1h' });
  const issued = atc(['issue', '--ledger', ledgerFile, '--policy', policy]);
  expect(issued.status).toBe(0);
  const client = await gatewayClient(gateway.url, (JSON.parse(issued.stdout) as { token: string }).token);
  const running = client.callTool({ name: 'files__slow', arguments: {} }).then((r) => r as CallToolResult, (e: unknown) => e);
  await untilLogged(log, () => toolCallsSeen(log, 'slow').length === 1);
  const first = starts()[0] as { pid: number };
  process.kill(first.pid, 'SIGKILL');
  const outcome = await running;
  // The SDK reports the closed connection as a JSON-RPC error; the gateway names no argument.
  expect(outcome instanceof Error ? outcome.message : JSON.stringify(outcome)).toMatch(/upstream|failed|closed/i);
  await untilLogged(log, () => starts().length === 2);
  let health = 0;
  for (let i = 0; i < 100 && health !== 200; i++) {
    health = (await fetch(new URL('/healthz', gateway.url))).status;
    if (health !== 200) await new Promise((r) => setTimeout(r, 50));
  }
  expect(health).toBe(200);
  expect((await client.callTool({ name: 'files__echo', arguments: { text: 'back' } })).isError).toBeFalsy();
  await client.close();
  expect(await gateway.stop()).toBe(0);
  const exported = tmp.file('log.jsonl');
  expect(atc(['export', ledgerFile, '--output', exported]).status).toBe(0);
  const events = fs.readFileSync(exported, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { type: string; tool?: string });
  expect(events.filter((e) => e.type === 'call.failed' && e.tool === 'files__slow')).toHaveLength(1);
  expect(events.filter((e) => e.type === 'call.completed' && e.tool === 'files__echo')).toHaveLength(1);
  expect(atc(['verify', ledgerFile]).status).toBe(0);
});

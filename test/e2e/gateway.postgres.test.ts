import { execFileSync } from 'node:child_process';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { atc, root, tempDir, toolCallsSeen } from '../support/mcpProxy';
import { gatewayClient, startGatewayProcess, stdioUpstream, type GatewayProcess } from '../support/gateway';
import { describePg, freshSchema, url } from '../support/pgTest';

// Two gateway processes on one PostgreSQL ledger: one principal's sessions on both, racing for its
// first grant, share one grant and one budget, and exactly the budget reaches the upstreams.
jest.setTimeout(120_000);

const issuerScript = path.join(root, 'test/fixtures/jwtIssuer.mjs');
const issuer = 'https://issuer.test';

describePg('atc gateway: two processes, one PostgreSQL ledger', () => {
  const tmp = tempDir();
  const keys = JSON.parse(execFileSync(process.execPath, [issuerScript, 'keys'], { encoding: 'utf8' })) as { privateJwk: object; jwks: object };
  const ledger = `${url()}?schema=${freshSchema('gateway')}`;
  const logs = [tmp.file('a.jsonl'), tmp.file('b.jsonl')];
  const gateways: GatewayProcess[] = [];
  const clients: Client[] = [];

  const config = (log: string): object => ({
    ledger,
    listen: '127.0.0.1:0',
    publicUrl: 'http://127.0.0.1:0/mcp',
    upstreams: { files: stdioUpstream(log) },
    auth: { oauth: { issuer, jwks: keys.jwks } },
    principals: { '*': 'team' },
    policies: { team: { tools: ['files__echo'], budget: { calls: 5, inputBytes: 10_000 }, expiresIn: '1h' } },
  });
  const jwt = (gateway: GatewayProcess, sub: string): string => {
    const now = Math.floor(Date.now() / 1000);
    return execFileSync(process.execPath, [issuerScript, 'sign', JSON.stringify(keys.privateJwk), JSON.stringify({ iss: issuer, aud: gateway.url.href, sub, exp: now + 600 })], { encoding: 'utf8' });
  };

  beforeAll(async () => {
    // One after the other: the first registers the tools, the second re-attaches them.
    gateways.push(await startGatewayProcess(tmp.file('a.json'), config(logs[0] as string)));
    gateways.push(await startGatewayProcess(tmp.file('b.json'), config(logs[1] as string)));
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await Promise.all(gateways.map((g) => (g.child.exitCode === null ? g.stop() : undefined)));
    tmp.cleanup();
  });

  test("a principal's first sessions on both processes at once get one grant; exactly its budget reaches the upstreams", async () => {
    const sessions = await Promise.all([0, 1, 0, 1, 0, 1].map(async (i) => {
      const gateway = gateways[i] as GatewayProcess;
      const client = await gatewayClient(gateway.url, jwt(gateway, 'carol'));
      clients.push(client);
      return client;
    }));
    const results = (await Promise.all(sessions.map(async (client, i) => {
      const out: CallToolResult[] = [];
      for (let j = 0; j < 2; j++) out.push((await client.callTool({ name: 'files__echo', arguments: { text: `c${i}-${j}` } })) as CallToolResult);
      return out;
    }))).flat();
    expect(results.filter((r) => r.isError !== true)).toHaveLength(5);
    expect(results.filter((r) => (r._meta as Record<string, unknown> | undefined)?.['atc/reason'] === 'call_budget_exhausted')).toHaveLength(12 - 5);
    expect(toolCallsSeen(logs[0] as string, 'echo').length + toolCallsSeen(logs[1] as string, 'echo').length).toBe(5);
    const listed = atc(['principals', '--ledger', ledger, '--json']);
    expect(listed.status).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ principal: 'carol', policy: 'team', generation: 0, status: 'active', usage: expect.objectContaining({ calls: { limit: 5, used: 5 } }) })]);
    expect(atc(['verify', ledger]).status).toBe(0);
  });
});

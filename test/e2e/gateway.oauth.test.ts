import { execFileSync } from 'node:child_process';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { atc, root, tempDir, toolCallsSeen, untilLogged } from '../support/mcpProxy';
import { gatewayClient, initializeBody, rawRequest, startGatewayProcess, stdioUpstream, type GatewayProcess } from '../support/gateway';

// `atc gateway` with OAuth access tokens (auth.oauth): JWTs from a local issuer (jose, in
// test/fixtures/jwtIssuer.mjs), principals mapped to policies, one root grant per principal and
// policy that survives restarts, revoke and re-enable by the host, SIGTERM with a call in flight.
jest.setTimeout(120_000);

const issuerScript = path.join(root, 'test/fixtures/jwtIssuer.mjs');
const issuer = 'https://issuer.test';
const tmp = tempDir();
const log = tmp.file('upstream.jsonl');
const ledgerFile = tmp.file('gateway.sqlite');
const configFile = tmp.file('gateway.json');
const keys = JSON.parse(execFileSync(process.execPath, [issuerScript, 'keys'], { encoding: 'utf8' })) as { privateJwk: object; jwks: { keys: object[] } };
const otherKeys = JSON.parse(execFileSync(process.execPath, [issuerScript, 'keys'], { encoding: 'utf8' })) as { privateJwk: object };
const config = {
  ledger: './gateway.sqlite',
  listen: '127.0.0.1:0',
  publicUrl: 'http://127.0.0.1:0/mcp',
  upstreams: { files: stdioUpstream(log) },
  auth: { oauth: { issuer, jwks: keys.jwks, principalClaim: 'sub' } },
  principals: { alice: 'dev', bob: 'readonly' },
  policies: {
    dev: { tools: ['files__echo', 'files__write_note'], budget: { calls: 3, inputBytes: 10_000 }, expiresIn: '1h' },
    readonly: { tools: ['files__echo', 'files__progress'], budget: { calls: 50, inputBytes: 10_000 }, expiresIn: '1h' },
  },
};
let gateway: GatewayProcess;
const clients: Client[] = [];

function jwt(claims: Record<string, unknown>, key: object = keys.privateJwk): string {
  const now = Math.floor(Date.now() / 1000);
  const full = { iss: issuer, aud: gateway.url.href, iat: now, nbf: now - 5, exp: now + 600, ...claims };
  return execFileSync(process.execPath, [issuerScript, 'sign', JSON.stringify(key), JSON.stringify(full)], { encoding: 'utf8' });
}

async function connect(principal: string): Promise<Client> {
  const client = await gatewayClient(gateway.url, jwt({ sub: principal }));
  clients.push(client);
  return client;
}

function reason(result: unknown): unknown {
  return ((result as CallToolResult)._meta as Record<string, unknown> | undefined)?.['atc/reason'];
}

function principals(): { principal: string; policy: string; generation: number; status: string; usage: { calls: { used: number; limit: number } } }[] {
  const listed = atc(['principals', '--ledger', ledgerFile, '--json']);
  expect(listed.status).toBe(0);
  return JSON.parse(listed.stdout);
}

beforeAll(async () => {
  gateway = await startGatewayProcess(configFile, config);
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  if (gateway.child.exitCode === null) await gateway.stop();
  tmp.cleanup();
});

test('each principal acts with its policy: tools/list per principal; a principal the config does not name is 403', async () => {
  const alice = await connect('alice');
  const bob = await connect('bob');
  expect((await alice.listTools()).tools.map((t) => t.name).sort()).toEqual(['files__echo', 'files__write_note']);
  expect((await bob.listTools()).tools.map((t) => t.name).sort()).toEqual(['files__echo', 'files__progress']);
  const carol = await rawRequest(gateway.url, { headers: { authorization: `Bearer ${jwt({ sub: 'carol' })}` }, body: initializeBody });
  expect(carol.status).toBe(403);
});

test('a token with a foreign signature, another audience, another issuer or past its exp is 401 invalid_token', async () => {
  const now = Math.floor(Date.now() / 1000);
  for (const token of [jwt({ sub: 'alice' }, otherKeys.privateJwk), jwt({ sub: 'alice', aud: 'http://127.0.0.1:1/mcp' }), jwt({ sub: 'alice', iss: 'https://other.test' }), jwt({ sub: 'alice', exp: now - 120 })]) {
    const reply = await rawRequest(gateway.url, { headers: { authorization: `Bearer ${token}` }, body: initializeBody });
    expect(reply.status).toBe(401);
    expect(reply.headers['www-authenticate']).toContain('error="invalid_token"');
  }
  const metadata = (await (await fetch(`${gateway.url.origin}/.well-known/oauth-protected-resource/mcp`)).json()) as Record<string, unknown>;
  expect(metadata).toEqual({ resource: gateway.url.href, authorization_servers: [issuer], bearer_methods_supported: ['header'] });
});

test("one root grant per principal: every session shares it, and a restart of the gateway never resets its budget", async () => {
  const first = await connect('alice');
  const second = await connect('alice');
  expect((await first.callTool({ name: 'files__echo', arguments: { text: 'one' } })).isError).toBeFalsy();
  expect((await second.callTool({ name: 'files__echo', arguments: { text: 'two' } })).isError).toBeFalsy();
  expect(await gateway.stop()).toBe(0);
  gateway = await startGatewayProcess(configFile, config);
  const after = await connect('alice');
  expect((await after.callTool({ name: 'files__echo', arguments: { text: 'three' } })).isError).toBeFalsy();
  expect(reason(await after.callTool({ name: 'files__echo', arguments: { text: 'four' } }))).toBe('call_budget_exhausted');
  const alice = principals().filter((p) => p.principal === 'alice');
  expect(alice).toHaveLength(1);
  expect(alice[0]).toMatchObject({ policy: 'dev', generation: 0, status: 'active', usage: { calls: { used: 3, limit: 3 } } });
});

test('a revoked principal stays refused until the host enables it; then it acts with a new grant', async () => {
  const bob = await connect('bob');
  expect((await bob.callTool({ name: 'files__echo', arguments: { text: 'before' } })).isError).toBeFalsy();
  expect(atc(['principals', 'revoke', 'bob', '--ledger', ledgerFile]).status).toBe(0);
  const refused = await rawRequest(gateway.url, { headers: { authorization: `Bearer ${jwt({ sub: 'bob' })}` }, body: initializeBody });
  expect(refused.status).toBe(403);
  expect(principals().find((p) => p.principal === 'bob')).toMatchObject({ status: 'revoked', generation: 0 });
  const enabled = atc(['principals', 'enable', 'bob', '--config', configFile]);
  expect(enabled.status).toBe(0);
  const again = await connect('bob');
  expect((await again.callTool({ name: 'files__echo', arguments: { text: 'after' } })).isError).toBeFalsy();
  expect(principals().find((p) => p.principal === 'bob')).toMatchObject({ status: 'active', generation: 1, usage: { calls: { used: 1 } } });
});

test('SIGTERM lets a call in flight finish, settles it, closes the ledger and exits 0; the log verifies', async () => {
  const client = await connect('bob');
  const seen = toolCallsSeen(log, 'progress').length;
  // 15 steps of 20 ms at the upstream: still running when the gateway is told to stop.
  const running = client.callTool({ name: 'files__progress', arguments: { steps: 15 } });
  await untilLogged(log, () => toolCallsSeen(log, 'progress').length > seen);
  const exit = gateway.stop('SIGTERM');
  const result = (await running) as CallToolResult;
  expect(result.isError).toBeFalsy();
  expect(result.content[0]).toEqual({ type: 'text', text: 'progress done' });
  expect(await exit).toBe(0);
  const verified = atc(['verify', ledgerFile]);
  expect(verified.stderr + verified.stdout).not.toMatch(/problem/i);
  expect(verified.status).toBe(0);
});

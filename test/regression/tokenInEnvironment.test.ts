import fs from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { atc, cli, hostileServer, tempDir, writeJson } from '../support/mcpProxy';

// Regression (issue 30, defect 5): with `--token-env` the upstream (a child of the proxy) read the
// grant token from /proc/<proxy pid>/environ: deleting it from process.env does not clear the
// initial environment block. `--token-file` and `--token-fd` never put it in the environment, and
// neither the file nor the descriptor stays open for the upstream to inherit.

interface Surroundings {
  readonly env: Record<string, string>;
  readonly parentEnviron: string;
  readonly fds: Record<string, string>;
  readonly parentFds: Record<string, string>;
}

let tmp: ReturnType<typeof tempDir>;
let ledger: string;
let token: string;
let tokenFile: string;
beforeAll(() => {
  tmp = tempDir();
  ledger = tmp.file('ledger.sqlite');
  const policy = writeJson(tmp.file('policy.json'), { tools: ['surroundings'], expiresIn: '1h', budget: { calls: 100, inputBytes: 10_000 } });
  const issued = atc(['issue', '--ledger', ledger, '--policy', policy, '--', process.execPath, hostileServer]);
  expect(issued.status).toBe(0);
  token = (JSON.parse(issued.stdout) as { token: string }).token;
  tokenFile = tmp.file('token');
  fs.writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
});
afterAll(() => tmp.cleanup());

/** Starts the proxy through bash (so descriptor 3 can be the token file or a pipe), asks the upstream what it sees. */
async function upstreamView(grantArgs: readonly string[], env: Record<string, string> = {}, fd3: 'file' | 'pipe' | 'none' = 'none'): Promise<Surroundings> {
  const redirect = { file: ' 3<"$ATC_TEST_FD3"', pipe: ' 3< <(cat "$ATC_TEST_FD3")', none: '' }[fd3];
  const command = [`exec "$0" "$@"${redirect}`, process.execPath, cli, 'proxy', '--ledger', ledger, ...grantArgs, '--', process.execPath, hostileServer];
  const transport = new StdioClientTransport({ command: '/bin/bash', args: ['-c', ...command], env: { PATH: process.env.PATH ?? '', ATC_TEST_FD3: tokenFile, ...env }, stderr: 'pipe' });
  const client = new Client({ name: 'token-test', version: '1.0.0' });
  await client.connect(transport);
  try {
    const result = (await client.callTool({ name: 'surroundings', arguments: {} })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    return JSON.parse((result.content[0] as { text: string }).text) as Surroundings;
  } finally {
    await client.close();
  }
}

function expectNoToken(view: Surroundings): void {
  expect(view.parentEnviron).not.toMatch(/^unreadable/); // the check below reads the real block
  expect(view.parentEnviron).not.toContain(token);
  expect(JSON.stringify(view.env)).not.toContain(token);
  expect(Object.values(view.fds)).not.toContain(tokenFile);
  expect(Object.values(view.parentFds)).not.toContain(tokenFile);
}

describe('regression: the grant token in the proxy\'s environment', () => {
  it('with --token-env, the upstream can read it from /proc/<ppid>/environ (the risk docs/mcp.md states)', async () => {
    const view = await upstreamView(['--token-env', 'ATC_TEST_TOKEN'], { ATC_TEST_TOKEN: token });
    expect(view.parentEnviron).toContain(token);
    expect(JSON.stringify(view.env)).not.toContain(token); // the child's own environment never had it
  });

  it('with --token-file, the token is in no environment and the file is closed before the upstream starts', async () => {
    expectNoToken(await upstreamView(['--token-file', tokenFile]));
  });

  it.each(['file', 'pipe'] as const)('with --token-fd 3 (a %s), the token is in no environment and the token file is open in neither process', async (kind) => {
    expectNoToken(await upstreamView(['--token-fd', '3'], {}, kind));
  });

  it.each([
    ['readable by group', 0o640, /mode 640\): chmod 600 it/],
    ['readable by others', 0o604, /mode 604\): chmod 600 it/],
  ])('refuses a token file %s, without printing the token', (_label, mode, message) => {
    const file = tmp.file(`token-${mode.toString(8)}`);
    fs.writeFileSync(file, token, { mode });
    fs.chmodSync(file, mode);
    const run = atc(['proxy', '--ledger', ledger, '--token-file', file, '--', process.execPath, hostileServer]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stderr).not.toContain(token);
  });

  it('refuses a token file that is a symlink, and a descriptor that is MCP\'s stdio', () => {
    const link = tmp.file('token-link');
    fs.symlinkSync(tokenFile, link);
    const viaLink = atc(['proxy', '--ledger', ledger, '--token-file', link, '--', process.execPath, hostileServer]);
    expect(viaLink.status).toBe(2);
    expect(viaLink.stderr).toMatch(/is a symlink/);
    const stdin = atc(['proxy', '--ledger', ledger, '--token-fd', '0', '--', process.execPath, hostileServer]);
    expect(stdin.status).toBe(2);
    expect(stdin.stderr).toMatch(/--token-fd needs a descriptor number of 3 or more/);
    const both = atc(['proxy', '--ledger', ledger, '--token-file', tokenFile, '--token-env', 'X', '--', process.execPath, hostileServer]);
    expect(both.status).toBe(2);
    expect(both.stderr).toMatch(/give exactly one of --policy, --token-file, --token-fd or --token-env/);
  });
});

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { runPolicy } from '../../src/cli/commands/policy';
import { captureIo } from '../support/sqliteFiles';
import { cli, httpServer, tempDir, writeJson } from '../support/mcpProxy';
import { startGatewayProcess, stdioUpstream } from '../support/gateway';

// `atc policy check --gateway <config>` (in process, real upstream processes) and `atc gateway`
// refusing to start on an error-level policy problem (the built binary). The upstream is
// test/fixtures/mcpLoggingServer.js: tools echo, write_note, read_notes, slow, progress, fail, delete_all.
jest.setTimeout(60_000);

const now = Date.parse('2026-06-01T12:00:00Z');
const tmp = tempDir();
afterAll(() => tmp.cleanup());

const run = async (args: string[]): Promise<{ code: number; out: string; err: string }> => {
  const io = captureIo();
  const code = await runPolicy(args, io, () => now);
  return { code, out: io.stdout.join('\n'), err: io.stderr.join('\n') };
};

const budget = { calls: 10, inputBytes: 10_000 };
const clean = { tools: ['files__write_note', 'files__echo'], resources: { files__write_note: ['notes:/{path}'], files__echo: [] }, scopes: ['notes:/drafts/'], expiresIn: '1h', budget };

function config(name: string, policies: object, extra: object = {}): string {
  return writeJson(tmp.file(name), {
    ledger: './gateway.sqlite',
    listen: '127.0.0.1:0',
    publicUrl: 'http://127.0.0.1:0/mcp',
    upstreams: { files: stdioUpstream(tmp.file(`${name}.upstream.jsonl`)) },
    auth: { tokens: true },
    policies,
    ...extra,
  });
}

describe('atc policy check --gateway', () => {
  test('a config whose policies fit the tools under their gateway names: exit 0', async () => {
    const r = await run(['check', '--gateway', config('clean.json', { dev: clean })]);
    expect(r.out).toMatch(/^ok: no problems \(checked against 7 tools from the gateway's upstreams\)$/);
    expect(r.code).toBe(0);
  });

  test('every problem of every policy, with a JSON Pointer into the config and its level', async () => {
    const file = config('bad.json', {
      dev: { ...clean, tools: [...clean.tools, 'echo'], args: { files__write_note: { properties: { txt: { maxLength: 1 } } } } },
      ro: { tools: ['files__read_notes'], resources: { files__read_notes: ['notes:/{paths[]}'] }, scopes: ['notes:/drafts/', 'https:/api.example.com:443/'], expiresIn: '1h', budget: { calls: 0, inputBytes: 10 } },
    });
    const r = await run(['check', '--gateway', file, '--json']);
    expect(r.code).toBe(1);
    const { problems } = JSON.parse(r.out) as { problems: { pointer: string; code: string; level: string; policy: string }[] };
    expect(problems.map((p) => [p.pointer, p.level, p.code])).toEqual([
      ['/policies/dev/tools/2', 'error', 'unknown_tool'],
      ['/policies/dev/args/files__write_note/properties/txt', 'error', 'undeclared_property'],
      ['/policies/ro/scopes/1', 'warning', 'unreachable_scope'],
      ['/policies/ro/budget/calls', 'warning', 'zero_budget'],
    ]);
    const text = await run(['check', '--gateway', file]);
    expect(text.out).toContain(`${file}#/policies/dev/tools/2 error unknown_tool: "echo" is not a tool`);
    expect(text.out).toContain('4 problem(s), 2 error(s): atc gateway refuses to start');
  });

  test('toolNames "plain" names the tools as the upstream lists them, and an HTTP upstream is reached', async () => {
    const server = await httpServer(tmp.file('http.jsonl'));
    try {
      const file = config('plain.json', { dev: { tools: ['echo', 'files__echo'], resources: {}, expiresIn: '1h', budget } }, { toolNames: 'plain', upstreams: { files: { url: server.url } } });
      const r = await run(['check', '--gateway', file, '--json']);
      expect(JSON.parse(r.out).problems).toEqual([expect.objectContaining({ pointer: '/policies/dev/tools/1', code: 'unknown_tool', level: 'error' })]);
    } finally {
      server.stop();
    }
  });

  test('a malformed policy and the rest of the config are reported against the config file', async () => {
    const malformed = await run(['check', '--gateway', config('malformed.json', { dev: { ...clean, budget: { calls: 1 } } }), '--json']);
    expect(JSON.parse(malformed.out).problems).toEqual([expect.objectContaining({ pointer: '/policies/dev/budget/inputBytes', code: 'malformed', level: 'error' })]);
    const badListen = await run(['check', '--gateway', config('listen.json', { dev: clean }, { listen: 'nowhere' }), '--json']);
    expect(badListen.code).toBe(1);
    expect(JSON.parse(badListen.out).problems).toEqual([expect.objectContaining({ pointer: '/listen', code: 'malformed', message: expect.stringContaining('host:port') })]);
    const notJsonFile = tmp.file('not.json');
    fs.writeFileSync(notJsonFile, '{ "upstreams": ');
    const notJson = await run(['check', '--gateway', notJsonFile]);
    expect(notJson.code).toBe(1);
    expect(notJson.out).toContain('malformed: the gateway config is not JSON');
  });

  test('usage, an unreadable config and an upstream that cannot start exit 2', async () => {
    const file = config('usage.json', { dev: clean });
    expect((await run(['check', '--gateway', file, writeJson(tmp.file('p.json'), clean)])).code).toBe(2);
    expect((await run(['check', '--gateway', file, '--url', 'http://127.0.0.1:1/mcp'])).code).toBe(2);
    expect((await run(['check', '--gateway', file, '--', 'node'])).code).toBe(2);
    expect((await run(['check', '--gateway', tmp.file('missing.json')])).code).toBe(2);
    const dead = await run(['check', '--gateway', config('dead.json', { dev: clean }, { upstreams: { files: { command: [process.execPath, '-e', 'process.exit(3)'] } } })]);
    expect(dead.code).toBe(2);
    expect(dead.err).toContain('upstream files could not be started or listed');
  });
});

describe('atc gateway checks its policies at start', () => {
  test('an error-level problem: it refuses to start, exit 1, every error printed with its pointer', () => {
    const file = config('refused.json', { dev: { ...clean, tools: [...clean.tools, 'files__nope'], args: { files__echo: { properties: { txt: {} } } }, resources: { ...clean.resources } } });
    const r = spawnSync(process.execPath, [cli, 'gateway', '--config', file], { encoding: 'utf8', timeout: 45_000, env: { PATH: process.env.PATH ?? '' } });
    expect(r.status).toBe(1);
    expect(r.stdout).not.toContain('listening');
    expect(r.stderr).toContain('gateway config policies: 2 error(s)');
    expect(r.stderr).toContain('#/policies/dev/tools/2 error unknown_tool');
    expect(r.stderr).toContain('#/policies/dev/args/files__echo/properties/txt error undeclared_property');
  });

  test('warnings only: it starts and prints them', async () => {
    const gateway = await startGatewayProcess(tmp.file('warned.json'), {
      ledger: './warned.sqlite',
      listen: '127.0.0.1:0',
      publicUrl: 'http://127.0.0.1:0/mcp',
      upstreams: { files: stdioUpstream(tmp.file('warned.jsonl')) },
      auth: { tokens: true },
      policies: { dev: { ...clean, budget: { calls: 0, inputBytes: 10 } } },
    });
    try {
      // stderr is its own pipe: the warning, written before `listening on`, may be read after it.
      const warning = 'policy warning: #/policies/dev/budget/calls warning zero_budget';
      await new Promise<void>((resolve) => {
        const seen = (): void => {
          if (!gateway.stderr().includes(warning)) return;
          gateway.child.stderr?.off('data', seen);
          resolve();
        };
        gateway.child.stderr?.on('data', seen);
        seen();
      });
      expect(gateway.stderr()).toContain(warning);
    } finally {
      expect(await gateway.stop()).toBe(0);
    }
  });
});

import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createLedger, sqliteStore, type LedgerEvent } from '../../src';
import { buildFsTree, type FsTree } from '../support/fsTree';
import { atc, proxyClient, root, tempDir, writeJson, type ProxyClient } from '../support/mcpProxy';

// Real processes: the official client → `atc proxy` → the reference filesystem server, started with
// a WIDER root (the whole tree) than the policy grants (allowed/ only). The server's stdin passes
// through test/fixtures/stdinRecorder.js, so what reached it is on record.
const filesystemServer = path.join(root, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const recorder = path.join(root, 'test/fixtures/stdinRecorder.js');
const secrets = /SECRET/;
const text = (result: unknown): string => ((result as CallToolResult).content as { type: string; text?: string }[]).map((c) => c.text ?? '').join('\n');

let tree: FsTree;
let tmp: ReturnType<typeof tempDir>;
let proxy: ProxyClient;
let received: string;
let ledger: string;
const tools = ['read_text_file', 'read_multiple_files', 'list_directory', 'write_file', 'move_file'];

beforeAll(async () => {
  tree = buildFsTree();
  tmp = tempDir();
  received = tmp.file('received.jsonl');
  ledger = tmp.file('ledger.sqlite');
  const policy = writeJson(tmp.file('policy.json'), {
    tools,
    resources: { read_text_file: ['fs:{path}'], read_multiple_files: ['fs:{paths[]}'], list_directory: ['fs:{path}'], write_file: ['fs:{path}'], move_file: ['fs:{source}', 'fs:{destination}'] },
    scopes: [`fs:${tree.allowed}/`],
    // The server resolves a relative path against its (first) root, so fsBase must be that root.
    fsBase: tree.root,
    expiresIn: '1h',
    budget: { calls: 1000, inputBytes: 1_000_000 },
  });
  proxy = await proxyClient(['--ledger', ledger, '--policy', policy, '--', process.execPath, recorder, received, '--', process.execPath, filesystemServer, tree.root]);
}, 60_000);

afterAll(async () => {
  await proxy.close();
  tree.remove();
  tmp.cleanup();
});

/** The tools/call messages the filesystem server received, as JSON-RPC objects. */
function callsReceived(): { params: { name: string; arguments: Record<string, unknown> } }[] {
  return fs.readFileSync(received, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as { method?: string; params: { name: string; arguments: Record<string, unknown> } }).filter((m) => m.method === 'tools/call');
}

function rejections(): Extract<LedgerEvent, { type: 'call.rejected' }>[] {
  const reader = createLedger({ store: sqliteStore({ path: ledger, readonly: true }) });
  const found = reader.events().filter((e): e is Extract<LedgerEvent, { type: 'call.rejected' }> => e.type === 'call.rejected');
  void reader.close();
  return found;
}

const inside = (p: string): string => path.join(tree.allowed, p);
const escapes: [string, string, Record<string, unknown>, string][] = [
  ['a symlink to a file outside', 'read_text_file', { path: 'allowed/esc-file' }, 'resource_not_permitted'],
  ['a symlink to a folder outside, then a file in it', 'read_text_file', { path: 'allowed/esc-dir/s.txt' }, 'resource_not_permitted'],
  ['an absolute symlink outside', 'read_text_file', { path: 'allowed/esc-abs' }, 'resource_not_permitted'],
  ['a chain of symlinks leading outside', 'read_text_file', { path: 'allowed/chain-out1' }, 'resource_not_permitted'],
  ['a symlink in a middle component', 'list_directory', { path: 'allowed/mid-out' }, 'resource_not_permitted'],
  ['a symlink to the parent folder', 'read_text_file', { path: 'allowed/link-to-parent/secret/s.txt' }, 'resource_not_permitted'],
  ['a sibling prefix (allowed_evil)', 'read_text_file', { path: 'allowed_evil/e.txt' }, 'resource_not_permitted'],
  ['a sibling prefix with a trailing space', 'read_text_file', { path: 'allowed /e.txt' }, 'resource_not_permitted'],
  ['a sibling prefix with a quote', 'read_text_file', { path: "allowed'/e.txt" }, 'resource_not_permitted'],
  ['a dot-dot climb', 'read_text_file', { path: 'allowed/../secret/s.txt' }, 'invalid_resource'],
  ['a dangling symlink outside', 'write_file', { path: 'allowed/dangling-out', content: 'x' }, 'invalid_resource'],
  ['a write through a folder symlink outside', 'write_file', { path: 'allowed/esc-dir/new.txt', content: 'x' }, 'resource_not_permitted'],
  ['a batch with one escaping path', 'read_multiple_files', { paths: ['allowed/a.txt', 'allowed/esc-file'] }, 'resource_not_permitted'],
  ['a move out of the granted folder', 'move_file', { source: 'allowed/swap.txt', destination: 'allowed/esc-dir/taken.txt' }, 'resource_not_permitted'],
];

describe('atc proxy in front of the reference filesystem server with a wider root than the policy', () => {
  it('the server alone would serve the escapes: its root covers the secret files', async () => {
    const direct = new Client({ name: 'control', version: '1.0.0' });
    await direct.connect(new StdioClientTransport({ command: process.execPath, args: [filesystemServer, tree.root], stderr: 'pipe' }));
    expect(text(await direct.callTool({ name: 'read_text_file', arguments: { path: path.join(tree.root, 'allowed/esc-file') } }))).toBe('SECRET');
    expect(text(await direct.callTool({ name: 'read_text_file', arguments: { path: path.join(tree.root, 'allowed_evil/e.txt') } }))).toMatch(secrets);
    await direct.close();
  });

  it.each(escapes)('refuses %s before the server sees the call', async (_name, tool, args, reason) => {
    const before = callsReceived().length;
    const result = await proxy.client.callTool({ name: tool, arguments: args });
    expect(result.isError).toBe(true);
    expect(result._meta).toMatchObject({ 'atc/reason': reason });
    expect(text(result)).not.toMatch(secrets);
    expect(callsReceived()).toHaveLength(before);
    expect(rejections().at(-1)).toMatchObject({ tool, reason });
  });

  it('serves legitimate paths: absolute, relative to the root, through symlinks that stay inside, the granted folder itself, new files', async () => {
    expect(text(await proxy.client.callTool({ name: 'read_text_file', arguments: { path: inside('a.txt') } }))).toBe('A');
    expect(text(await proxy.client.callTool({ name: 'read_text_file', arguments: { path: 'allowed/sub/b.txt' } }))).toBe('B');
    expect(text(await proxy.client.callTool({ name: 'read_text_file', arguments: { path: inside('link-inside') } }))).toBe('B');
    expect(text(await proxy.client.callTool({ name: 'read_text_file', arguments: { path: inside('chain1') } }))).toBe('A');
    expect(text(await proxy.client.callTool({ name: 'read_text_file', arguments: { path: path.join(tree.root, 'alias/a.txt') } }))).toBe('A');
    expect(text(await proxy.client.callTool({ name: 'list_directory', arguments: { path: inside('dirlink-inside') } }))).toMatch(/b\.txt/);
    // The granted folder itself, with only `fs:<allowed>/` in the policy's scopes (issue 32, item 8).
    expect(text(await proxy.client.callTool({ name: 'list_directory', arguments: { path: tree.allowed } }))).toMatch(/a\.txt/);
    const written = await proxy.client.callTool({ name: 'write_file', arguments: { path: inside('sub/new.txt'), content: 'from the agent' } });
    expect(written.isError).toBeFalsy();
    expect(fs.readFileSync(inside('sub/new.txt'), 'utf8')).toBe('from the agent');
    const seen = callsReceived().map((m) => m.params.name);
    expect(seen).toHaveLength(8);
  });

  it('leaves everything outside the granted folder unchanged, and the log verifies', () => {
    const after = tree.outside();
    expect(Object.values(after).join('\n')).not.toMatch(/from the agent|^x$/m);
    expect(fs.existsSync(path.join(tree.root, 'secret/new.txt'))).toBe(false);
    expect(fs.existsSync(path.join(tree.root, 'secret/taken.txt'))).toBe(false);
    expect(fs.existsSync(inside('swap.txt'))).toBe(true);
    expect(atc(['verify', ledger]).status).toBe(0);
  });
});

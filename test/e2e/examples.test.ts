import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { cli, root, tempDir } from '../support/mcpProxy';

// The files under examples/ run as they are, with only their placeholder paths replaced.
const filesystemServer = path.join(root, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const text = (result: unknown): string => ((result as CallToolResult).content[0] as { text: string }).text;

describe('examples/mcp: Claude-Desktop-style config with atc proxy in front of server-filesystem', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => (tmp = tempDir()));
  afterEach(() => tmp.cleanup());

  /** The example's mcpServers entry, its paths pointed at a scratch project, `npx` at the local binaries. */
  function configuredServer(): { command: string; args: string[]; project: string } {
    fs.mkdirSync(tmp.file('project'));
    const project = fs.realpathSync(tmp.file('project'));
    const atcDir = tmp.file('atc');
    fs.mkdirSync(atcDir);
    const place = (s: string): string => s.split('/srv/project').join(project).split('/srv/atc').join(atcDir);
    fs.writeFileSync(path.join(atcDir, 'policy.json'), place(fs.readFileSync(path.join(root, 'examples/mcp/policy.json'), 'utf8')));
    const config = JSON.parse(place(fs.readFileSync(path.join(root, 'examples/mcp/claude_desktop_config.json'), 'utf8'))) as { mcpServers: Record<string, { command: string; args: string[] }> };
    const entry = config.mcpServers['project-files'] as { command: string; args: string[] };
    expect(entry.command).toBe('npx');
    const args = entry.args.join('\u0000').replace('-y\u0000agent-tool-capabilities', cli).replace('npx\u0000-y\u0000@modelcontextprotocol/server-filesystem', `${process.execPath}\u0000${filesystemServer}`).split('\u0000');
    return { command: process.execPath, args, project };
  }

  it('reads inside the project, refuses outside it before the server sees the call, and logs a log that verifies', async () => {
    const server = configuredServer();
    fs.writeFileSync(path.join(server.project, 'notes.txt'), 'inside');
    const client = new Client({ name: 'desktop', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: server.command, args: server.args, stderr: 'pipe' }));
    const listed = (await client.listTools()).tools.map((t) => t.name).sort();
    expect(listed).toEqual(['list_allowed_directories', 'list_directory', 'move_file', 'read_multiple_files', 'read_text_file', 'write_file']);
    expect(text(await client.callTool({ name: 'read_text_file', arguments: { path: path.join(server.project, 'notes.txt') } }))).toBe('inside');
    expect(text(await client.callTool({ name: 'read_text_file', arguments: { path: 'notes.txt' } }))).toBe('inside');
    const outside = await client.callTool({ name: 'read_text_file', arguments: { path: '/etc/hostname' } });
    expect(outside._meta).toMatchObject({ 'atc/reason': 'resource_not_permitted' });
    const climbing = await client.callTool({ name: 'read_text_file', arguments: { path: `${server.project}/../escape` } });
    expect(climbing._meta).toMatchObject({ 'atc/reason': 'invalid_resource' });
    const deleting = await client.callTool({ name: 'edit_file', arguments: { path: 'notes.txt', edits: [] } });
    expect(deleting._meta).toMatchObject({ 'atc/reason': 'tool_not_granted' });
    const written = await client.callTool({ name: 'write_file', arguments: { path: 'out.txt', content: 'from the agent' } });
    expect(written.isError).toBeFalsy();
    expect(fs.readFileSync(path.join(server.project, 'out.txt'), 'utf8')).toBe('from the agent');
    await client.close();
    const ledger = server.args[server.args.indexOf('--ledger') + 1] as string;
    expect(spawnSync(process.execPath, [cli, 'verify', ledger], { encoding: 'utf8' }).status).toBe(0);
  });
});

describe('examples/ai-sdk/agent-loop.mjs', () => {
  it('runs the agent loop: the allowed call lands, the others come back to the model as rejections', () => {
    const run = spawnSync(process.execPath, [path.join(root, 'test/fixtures/runAgentExample.mjs')], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    const outcome = JSON.parse(run.stdout) as { text: string; notes: Record<string, string>; decisions: string[]; toolErrors: string[]; offered: string[] };
    expect(outcome.offered).toEqual(['notes_write']);
    expect(outcome.notes).toEqual({ 'drafts/plan': 'ship it' });
    expect(outcome.decisions).toEqual(['notes_write: admitted', 'notes_write: resource_not_permitted']);
    expect(outcome.toolErrors).toEqual(['rejected: resource_not_permitted']);
    expect(outcome.text).toBe('saved the plan');
  });

  it('is at most 30 lines', () => {
    expect(fs.readFileSync(path.join(root, 'examples/ai-sdk/agent-loop.mjs'), 'utf8').trimEnd().split('\n').length).toBeLessThanOrEqual(30);
  });
});

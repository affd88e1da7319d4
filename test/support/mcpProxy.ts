import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { keepProgressBeforeResponses } from '../../src/integrations/mcp/progressOrder';

// Real processes: the official MCP client → the built `atc proxy` (dist/, built by `pretest`) →
// the logging test server (test/fixtures/mcpLoggingServer.js) as the proxy's child, or over HTTP.
export const root = path.resolve(__dirname, '../..');
export const cli = path.join(root, 'dist/src/cli/main.js');
export const loggingServer = path.join(root, 'test/fixtures/mcpLoggingServer.js');
/** The hostile test server (forged `_meta`, escapes in names, oversized frames): test/fixtures/mcpHostileServer.js. */
export const hostileServer = path.join(root, 'test/fixtures/mcpHostileServer.js');

export function tempDir(): { readonly dir: string; file(name: string): string; cleanup(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'atc-mcp-'));
  return { dir, file: (name) => path.join(dir, name), cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

export interface LogRecord {
  readonly kind: 'start' | 'message' | 'http' | 'aborted';
  readonly message?: { readonly method?: string; readonly id?: unknown; readonly params?: { readonly name?: string; readonly requestId?: unknown } };
  readonly [key: string]: unknown;
}

/** The test server's own record of what it received. */
export function serverLog(file: string): LogRecord[] {
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as LogRecord);
}

export function toolCallsSeen(file: string, name?: string): LogRecord[] {
  return serverLog(file).filter((r) => r.kind === 'message' && r.message?.method === 'tools/call' && (name === undefined || r.message.params?.name === name));
}

/** Waits (bounded) until the server's log satisfies `ready`: the server, not a timer, says when. */
export async function untilLogged(file: string, ready: (records: LogRecord[]) => boolean, timeoutMs = 20_000): Promise<LogRecord[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const records = serverLog(file);
    if (ready(records)) return records;
    if (Date.now() > deadline) throw new Error('the server never logged what the test waited for');
    await new Promise((r) => setTimeout(r, 20));
  }
}

export interface ProxyClient {
  readonly client: Client;
  readonly stderr: () => string;
  close(): Promise<void>;
}

export const relayServer = path.join(root, 'test/fixtures/mcpRelayServer.js');

/** Starts `atc proxy` with these arguments and connects the official client (declaring `capabilities`) to it over stdio. */
export async function proxyClient(args: readonly string[], env: { readonly [k: string]: string } = {}, capabilities: ClientCapabilities = {}): Promise<ProxyClient> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [cli, 'proxy', ...args], env: { PATH: process.env.PATH ?? '', ...env }, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const client = new Client({ name: 'e2e-test-client', version: '1.0.0' }, { capabilities });
  await client.connect(transport);
  // The SDK client drops progress read together with its response (typescript-sdk#2580); the proxy
  // sends progress first, but a loaded test machine can still read both at once on this side.
  keepProgressBeforeResponses(transport);
  return { client, stderr: () => stderr, close: () => client.close() };
}

/** Runs an `atc` command to completion in its own process. */
export function atc(args: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
}

/** Starts the logging server over Streamable HTTP on 127.0.0.1 and resolves its URL. */
export async function httpServer(log: string, extra: readonly string[] = []): Promise<{ url: string; child: ChildProcess; stop(): void }> {
  const child = spawn(process.execPath, [loggingServer, '--log', log, '--http', ...extra], { stdio: ['pipe', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const m = /listening (\S+)/.exec(out);
      if (m !== null) resolve(m[1] as string);
    });
    child.once('exit', () => reject(new Error('the HTTP test server exited')));
  });
  return {
    url,
    child,
    stop: () => {
      child.stdin?.end();
      child.kill();
    },
  };
}

export function writeJson(file: string, value: unknown): string {
  fs.writeFileSync(file, JSON.stringify(value, null, 2));
  return file;
}

import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { cli, loggingServer, relayServer, writeJson } from './mcpProxy';

// Real processes: the built `atc gateway` (dist/) with test upstreams, reached by the official
// SDK client over Streamable HTTP.

export interface GatewayProcess {
  readonly url: URL;
  readonly child: ChildProcess;
  stderr(): string;
  /** Sends the signal and resolves the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Writes the config and starts `atc gateway`; resolves once it prints `listening on …`. */
export async function startGatewayProcess(configFile: string, config: unknown, extra: { readonly args?: readonly string[]; readonly env?: { readonly [name: string]: string } } = {}): Promise<GatewayProcess> {
  writeJson(configFile, config);
  const child = spawn(process.execPath, [cli, 'gateway', '--config', configFile, ...(extra.args ?? [])], { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '', ...(extra.env ?? {}) } });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<URL>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const m = /listening on (\S+)/.exec(out);
      if (m !== null) resolve(new URL(m[1] as string));
    });
    void exited.then((code) => reject(new Error(`atc gateway exited (${code}): ${stderr}`)));
  });
  return {
    url,
    child,
    stderr: () => stderr,
    stop: (signal = 'SIGTERM') => {
      child.kill(signal);
      return exited;
    },
  };
}

/** The official client connected to the gateway with this bearer credential (declaring `capabilities`). */
export async function gatewayClient(url: URL, bearer: string | undefined, capabilities: ClientCapabilities = {}): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: bearer === undefined ? {} : { authorization: `Bearer ${bearer}` } } });
  const client = new Client({ name: 'gateway-test-client', version: '1.0.0' }, { capabilities });
  await client.connect(transport);
  return client;
}

/** Starts test/fixtures/mcpRelayServer.js over Streamable HTTP on 127.0.0.1 and resolves its URL. */
export async function relayHttpServer(): Promise<{ url: string; stop(): void }> {
  const child = spawn(process.execPath, [relayServer, '--http'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const m = /listening (\S+)/.exec(out);
      if (m !== null) resolve(m[1] as string);
    });
    child.once('exit', () => reject(new Error('the HTTP relay test server exited')));
  });
  return {
    url,
    stop: () => {
      child.stdin?.end();
      child.kill();
    },
  };
}

export function stdioUpstream(log: string, extra: readonly string[] = []): { command: string[] } {
  return { command: [process.execPath, loggingServer, '--log', log, ...extra] };
}

export interface RawReply {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** One raw HTTP request (any Host header, any body), for what the SDK client would never send. */
export function rawRequest(url: URL, options: { method?: string; headers?: Record<string, string>; body?: string | Buffer; path?: string }): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const req = http.request({ agent: false, host: url.hostname, port: url.port, method: options.method ?? 'POST', path: options.path ?? url.pathname, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(options.headers ?? {}) } }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

export const initializeBody = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });

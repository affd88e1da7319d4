// What the conformance suite talks to: our product in front of the reference server, either `atc
// proxy` (stdio) behind the harness's HTTP bridge, or `atc gateway` (Streamable HTTP itself) behind
// a shim that adds the bearer credential the suite cannot send.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createLedger, sqliteStore } from '../../src';
import type { JsonObject } from '../../src/domain/json';
import { startAuthShim } from './authShim';
import { startBridge } from './bridge';
import { freePort } from './reference';

export interface Front {
  readonly url: string;
  /** What fronts the reference server, for the summary. */
  readonly describe: string;
  /** The reference server's tools the policy grants, and those the ledger refused to register (with why). */
  readonly granted: readonly string[];
  readonly refused: readonly { readonly tool: string; readonly why: string }[];
  close(): Promise<void>;
}

export type FrontStarter = (upstreamUrl: string, workDir: string, cli: string) => Promise<Front>;

/**
 * Registers the reference server's tools in a fresh SQLite ledger (so the policy grants every tool
 * the ledger accepts, and the summary names any it refuses), writes a policy granting them, and
 * serves each HTTP session with its own `atc proxy --policy … --url <reference>`.
 */
export const proxyFront: FrontStarter = async (upstreamUrl, workDir, cli) => {
  const ledgerFile = path.join(workDir, 'ledger.sqlite');
  const { granted, refused } = await registerReferenceTools(upstreamUrl, ledgerFile);
  const policy = { tools: granted, expiresIn: '1h', budget: { calls: 1_000_000, inputBytes: 1_000_000_000 } };
  const policyFile = path.join(workDir, 'policy.json');
  writeFileSync(policyFile, JSON.stringify(policy, null, 2));
  const bridge = await startBridge({ command: process.execPath, args: [cli, 'proxy', '--ledger', ledgerFile, '--policy', policyFile, '--quiet', '--url', upstreamUrl], env: { PATH: process.env.PATH ?? '' } });
  return { url: bridge.url, describe: 'atc proxy (stdio, one process per session) behind the harness bridge (experiments/conformance/bridge.ts)', granted, refused, close: () => bridge.close() };
};

/**
 * `atc gateway --config …` with the reference server as its one HTTP upstream (`toolNames: plain`,
 * so the suite calls the tools by their own names), and a capability token granting every tool the
 * ledger registered. The suite reaches it at publicUrl through the auth shim.
 */
export const gatewayFront: FrontStarter = async (upstreamUrl, workDir, cli) => {
  const ledgerFile = path.join(workDir, 'gateway.sqlite');
  const { granted, refused } = await registerReferenceTools(upstreamUrl, ledgerFile);
  const token = await issueToken(ledgerFile, granted);
  const [shimPort, gatewayPort] = [await freePort(), await freePort()];
  const publicUrl = `http://localhost:${shimPort}/mcp`;
  const config = { ledger: ledgerFile, listen: `127.0.0.1:${gatewayPort}`, publicUrl, upstreams: { everything: { url: upstreamUrl } }, toolNames: 'plain', auth: { tokens: true } };
  const configFile = path.join(workDir, 'gateway.json');
  writeFileSync(configFile, JSON.stringify(config, null, 2));
  const child = spawn(process.execPath, [cli, 'gateway', '--config', configFile, '--quiet'], { stdio: ['ignore', 'pipe', 'inherit'], env: { PATH: process.env.PATH ?? '' } });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (out.includes('listening on')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`atc gateway exited (${code}) before it listened`)));
  });
  const shim = await startAuthShim(shimPort, { host: '127.0.0.1', port: gatewayPort }, token);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    url: publicUrl,
    describe: 'atc gateway --config (Streamable HTTP, the reference server as its HTTP upstream, toolNames plain) behind the harness auth shim (experiments/conformance/authShim.ts)',
    granted,
    refused,
    async close() {
      await shim.close();
      child.kill('SIGTERM');
      await exited;
    },
  };
};

async function issueToken(ledgerFile: string, tools: readonly string[]): Promise<string> {
  const ledger = createLedger({ store: sqliteStore({ path: ledgerFile }) });
  try {
    return (await ledger.issue({ tools: [...tools], expiresAt: Date.now() + 3_600_000, budget: { calls: 1_000_000, inputBytes: 1_000_000_000 } })).token;
  } finally {
    await ledger.close();
  }
}

async function registerReferenceTools(upstreamUrl: string, ledgerFile: string): Promise<{ granted: string[]; refused: { tool: string; why: string }[] }> {
  const client = new Client({ name: 'atc-conformance-harness', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(upstreamUrl)));
  const ledger = createLedger({ store: sqliteStore({ path: ledgerFile }) });
  const granted: string[] = [];
  const refused: { tool: string; why: string }[] = [];
  try {
    const { tools } = await client.listTools();
    for (const tool of tools) {
      try {
        // The proxies attach their own run (forwarding upstream); this one only records the tool.
        await ledger.registerTool({ name: tool.name, inputSchema: tool.inputSchema as JsonObject, run: () => ({}) });
        granted.push(tool.name);
      } catch (error) {
        refused.push({ tool: tool.name, why: (error as Error).message });
      }
    }
  } finally {
    await ledger.close();
    await client.close();
  }
  return { granted, refused };
}

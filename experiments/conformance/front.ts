// What the conformance suite talks to: our product in front of the reference server. Today `atc
// proxy` (stdio) behind the harness's HTTP bridge; when `atc gateway` lands, `gatewayFront` (one
// function with the same shape) replaces `proxyFront` in main.ts.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createLedger, sqliteStore } from '../../src';
import type { JsonObject } from '../../src/domain/json';
import { startBridge } from './bridge';

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

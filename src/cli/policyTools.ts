import { readFileSync, statSync } from 'node:fs';
import type { JsonObject } from '../domain/json';
import { policyBytesMax } from '../integrations/mcp/policy';
import type { PolicyTool } from '../policy/checkPolicy';
import type { ToolSource } from './commands/policyArgs';
import { packageVersion } from './ledgerFile';
import { readLogEvents } from './logEvents';

/**
 * The tools a policy is checked or tested against: those the upstream lists (started over stdio
 * or reached over Streamable HTTP, then closed; the MCP SDK is loaded only then), those the log's
 * `tool.registered` events hold, or none given (undefined).
 */
export async function loadPolicyTools(source: ToolSource): Promise<PolicyTool[] | undefined> {
  if (source.kind === 'none') return undefined;
  if (source.kind === 'log') {
    const events = await readLogEvents(source.target, ['tool.registered']);
    return events.flatMap((e) => (e.type === 'tool.registered' ? [{ name: e.tool, inputSchema: e.inputSchema }] : []));
  }
  const { connectUpstream, listUpstreamTools } = await import('../integrations/mcp/upstream');
  const client = await connectUpstream(source.target, packageVersion());
  try {
    const listed = await listUpstreamTools(client);
    return listed.map((t) => ({ name: t.name, inputSchema: t.inputSchema as JsonObject }));
  } finally {
    await client.close().catch(() => undefined);
  }
}

/** A JSON file's text, refused before reading when it is larger than `bytesMax`. */
export function readBoundedText(file: string, bytesMax: number = policyBytesMax): string {
  let size: number;
  try {
    size = statSync(file).size;
  } catch (error) {
    throw new Error(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  if (size > bytesMax) throw new Error(`${file} is larger than ${bytesMax} bytes`);
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
}

import fs from 'node:fs';
import type { CliCommand } from '../command';
import { packageVersion, splitCommand, withLedgerAt } from '../ledgerFile';
import { upstreamTarget } from '../upstreamArgs';
import { checkPolicyTools, parsePolicy, policyIssueOptions, registeredSchemas, type Policy } from '../../integrations/mcp/policy';
import { checkPolicyPaths } from '../../integrations/mcp/policyPaths';
import { printable } from '../../integrations/mcp/printable';
import { ResourceMapping } from '../../integrations/mcp/resourceMapping';
import { parseOptions, sqliteProcessIo, type SqliteCliIo } from '../../stores/sqlite/sqliteCliIo';

const usage = 'usage: atc issue --ledger <log.sqlite | postgres://…> --policy <policy.json> [--url <http://…> | -- <command> [args…]]';

/** Reads and checks a policy file; the error names the file and the field. */
export function readPolicyFile(file: string): Policy {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(`cannot read the policy file ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  const policy = parsePolicy(text);
  checkPolicyPaths(policy);
  return policy;
}

/**
 * `atc issue`: issues the policy's grant in a ledger file and prints `{ grantId, token }` once. With an
 * upstream, first registers its tools as the proxy does; without one, the tools must be in the log.
 */
export async function runIssue(args: readonly string[], io: SqliteCliIo = sqliteProcessIo): Promise<number> {
  const split = splitCommand(args);
  const parsed = parseOptions(split.options, ['ledger', 'policy', 'url'], ['help']);
  if ('error' in parsed || parsed.flags.has('help') || parsed.positional.length !== 0 || !parsed.values.has('ledger') || !parsed.values.has('policy')) {
    if ('error' in parsed) io.err(`atc issue: ${parsed.error}`);
    io.err(usage);
    return 'error' in parsed || !parsed.flags.has('help') ? 2 : 0;
  }
  const target = upstreamTarget(split.command, parsed.values.get('url'));
  if (target !== undefined && 'error' in target) {
    io.err(`atc issue: ${target.error}`);
    return 2;
  }
  let policy: Policy;
  try {
    policy = readPolicyFile(parsed.values.get('policy') as string);
  } catch (error) {
    io.err(`atc issue: ${(error as Error).message}`);
    return 2;
  }
  return withLedgerAt('issue', parsed.values.get('ledger') as string, { create: true }, (l) => io.err(printable(l)), async (ledger) => {
    if (target !== undefined) {
      // Loaded only when an upstream is given: the other commands do not load the MCP SDK.
      const { attachUpstream } = await import('../../integrations/mcp/startProxy');
      const { client, tools } = await attachUpstream(ledger, target, packageVersion(), new ResourceMapping());
      await client.close();
      for (const [name, why] of tools.refused) io.err(`atc issue: tool ${printable(name)} not registered: ${printable(why)}`);
    }
    checkPolicyTools(policy, registeredSchemas(ledger));
    const issued = await ledger.issue(policyIssueOptions(policy, Date.now()));
    await io.out(JSON.stringify({ grantId: issued.grantId, token: issued.token }));
    return 0;
  });
}

export const issueCommand: CliCommand = {
  summary: 'issue a grant from a policy file into a ledger file; prints { grantId, token } once',
  run: (args) => runIssue(args),
};

import fs from 'node:fs';
import type { CliCommand } from '../command';
import { packageVersion, withLedgerAt } from '../ledgerFile';
import { upstreamTarget } from '../upstreamArgs';
import { checkPolicyTools, parsePolicy, policyIssueOptions, registeredSchemas, type Policy } from '../../integrations/mcp/policy';
import { checkPolicyPaths } from '../../integrations/mcp/policyPaths';
import { printable } from '../../text/printable';
import { ResourceMapping } from '../../integrations/mcp/resourceMapping';
import { processIo, type CliIo } from '../io';
import { creatingLedgerOption, parseOrExit, upstreamOptions, usageError, type CommandSpec } from '../options';

export const issueSpec: CommandSpec = {
  name: 'issue',
  summary: 'issue a grant from a policy file into a ledger file; prints { grantId, token } once',
  usage: ['--ledger <log.sqlite | postgres://…> --policy <policy.json> [--upstream-command "<command> [args…]" | --url <http://…> | -- <command> [args…]]'],
  description: 'With an upstream (on the command line or in the policy\'s "upstream"), first registers its tools as the proxy does; without one, the tools must already be in the log. The token is printed once, on stdout: store it as a secret.',
  rest: true,
  options: [
    creatingLedgerOption,
    { name: 'policy', value: '<policy.json>', required: true, description: 'the grant to issue (docs/mcp.md, "Policy files")' },
    ...upstreamOptions,
  ],
};

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
export async function runIssue(args: readonly string[], io: CliIo = processIo): Promise<number> {
  const parsed = await parseOrExit(issueSpec, args, io);
  if (typeof parsed === 'number') return parsed;
  let policy: Policy;
  try {
    policy = readPolicyFile(parsed.values.get('policy') as string);
  } catch (error) {
    io.err(`atc issue: ${(error as Error).message}`);
    return 2;
  }
  const target = upstreamTarget({ dashDash: parsed.rest, commandOption: parsed.values.get('upstream-command'), url: parsed.values.get('url'), policy: policy.upstream });
  if (target !== undefined && 'error' in target) return usageError(issueSpec, io, target.error);
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
  summary: issueSpec.summary,
  spec: issueSpec,
  run: (args) => runIssue(args),
};

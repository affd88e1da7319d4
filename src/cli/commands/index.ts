import type { CliCommand } from '../command';

/**
 * A command whose module is loaded only when it runs: `atc --help` and every other command load
 * none of it (`atc proxy` alone pulls in the MCP SDK). The summary is the module's own;
 * test/e2e/cli.lazyCommands.test.ts checks they agree.
 */
export interface LazyCliCommand extends CliCommand {
  /** The command's module, loaded on first use. */
  load(): Promise<CliCommand>;
}

function lazy(summary: string, load: () => Promise<CliCommand>): LazyCliCommand {
  return { summary, load, run: async (args) => (await load()).run(args) };
}

// Each command lives in its own module beside this file; add it here.
export const commands: { readonly [name: string]: LazyCliCommand } = {
  approvals: lazy('list the calls of a ledger waiting for a person (--json); decide them with atc approve / atc deny', async () => (await import('./approvals')).approvalsCommand),
  approve: lazy('approve a pending call (--by NAME): the process whose invoke waits runs it', async () => (await import('./approve')).approveCommand),
  audit: lazy('print the decisions of a SQLite or PostgreSQL log (filters, --json, --follow), or its grant tree (--tree)', async () => (await import('./audit')).auditCommand),
  checkpoint: lazy("print a signed checkpoint (C2SP) of a log's head (--key <file.key>)", async () => (await import('./checkpoint')).checkpointCommand),
  deny: lazy('deny a pending call (--by NAME): its invoke is rejected approval_denied and its budget released', async () => (await import('./deny')).denyCommand),
  export: lazy('write a SQLite or PostgreSQL log as JSON Lines (--output log.jsonl)', async () => (await import('./export')).exportCommand),
  gateway: lazy('MCP gateway over Streamable HTTP for many agents: every tools/call through the ledger (--config gateway.json)', async () => (await import('./gateway')).gatewayCommand),
  grants: lazy('list the grants of a ledger file with status, parents and usage (--json)', async () => (await import('./grants')).grantsCommand),
  issue: lazy('issue a grant from a policy file into a ledger file; prints { grantId, token } once', async () => (await import('./issue')).issueCommand),
  principals: lazy("list the gateway's principals with grants, status and usage (--json); revoke or enable one", async () => (await import('./principals')).principalsCommand),
  policy: lazy('check a policy against the real tools, test it with sample calls, diff it against a log (check | test | diff)', async () => (await import('./policy')).policyCommand),
  proxy: lazy('MCP proxy on stdio: every tools/call through the ledger before the upstream sees it', async () => (await import('./proxy')).proxyCommand),
  keygen: lazy('create a log signing key (--origin <name> --out <file.key>), print its verifier key', async () => (await import('./keygen')).keygenCommand),
  prove: lazy('print a C2SP tlog-proof that event --seq N is in a checkpoint (--checkpoint <file>)', async () => (await import('./prove')).proveCommand),
  revoke: lazy('revoke a grant in a ledger file (--abort: abort its running calls)', async () => (await import('./revoke')).revokeCommand),
  serve: lazy('serve a read-only audit page of a log (http://127.0.0.1 by default)', async () => (await import('./serve')).serveCommand),
  verify: lazy('check an evidence file, a SQLite log or a JSON Lines log (re-derived decisions); exit 1 on any problem', async () => (await import('./verify')).verifyCommand),
  'verify-proof': lazy('check a tlog-proof with only the verifier key (--vkey <key|@file>); exit 1 if invalid', async () => (await import('./verifyProof')).verifyProofCommand),
};


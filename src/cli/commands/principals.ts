import type { CliCommand } from '../command';
import { openLedgerAt, withLedgerAt } from '../ledgerFile';
import { latestPrincipalGrant } from '../../domain/principals';
import { shardGet } from '../../domain/shardedMap';
import type { Ledger, Usage } from '../../stream/types';
import { processIo, type CliIo } from '../io';
import { ledgerOption, parseOrExit, usageError, type CommandSpec } from '../options';

export const principalsSpec: CommandSpec = {
  name: 'principals',
  summary: "list the gateway's principals with grants, status and usage (--json); revoke or enable one",
  usage: ['--ledger <log.sqlite | postgres://…> [--json]', 'revoke <principal> --ledger <…> [--policy NAME] [--abort]', 'enable <principal> --config <gateway.json>'],
  description: 'list: every principal the gateway issued a grant for, its policy, current grant, generation, status and usage (never a token). revoke: revokes the principal\'s current grants (every policy, or --policy); the gateway refuses it until enabled. enable: issues its next grant from the policy the config maps it to now (a fresh budget: the host\'s decision); refused while it still has an active grant.',
  options: [
    { ...ledgerOption, required: false, description: `list, revoke: ${ledgerOption.description}` },
    { name: 'json', description: 'list: print one JSON array instead of the table' },
    { name: 'policy', value: '<NAME>', description: "revoke: only the principal's grant for this policy" },
    { name: 'abort', description: "revoke: abort the principal's calls in flight" },
    { name: 'config', value: '<gateway.json>', description: 'enable: the gateway config (the policy in force for the principal)' },
  ],
  operands: { name: 'subcommand and principal', min: 0, max: 2 },
};

export interface PrincipalListing {
  readonly principal: string;
  readonly policy: string;
  readonly grantId: string;
  readonly generation: number;
  readonly status: 'active' | 'revoked' | 'expired';
  readonly usage: Usage;
}

/** Every (principal, policy) the log has a grant for, with its latest grant; never a token. */
export function listPrincipals(ledger: Ledger, now: number): PrincipalListing[] {
  const pairs = new Map<string, { name: string; policy: string }>();
  for (const event of ledger.events()) {
    if (event.type === 'grant.issued' && event.principal !== undefined) pairs.set(JSON.stringify([event.principal.name, event.principal.policy]), { name: event.principal.name, policy: event.principal.policy });
  }
  const state = ledger.state();
  const listed: PrincipalListing[] = [];
  for (const { name, policy } of pairs.values()) {
    const latest = latestPrincipalGrant(state, name, policy);
    if (latest === undefined) continue;
    const grant = latest.grant;
    listed.push({ principal: name, policy, grantId: grant.grantId, generation: latest.generation, status: grant.revoked ? 'revoked' : now >= grant.scope.expiresAt ? 'expired' : 'active', usage: ledger.usage(grant.grantId) });
  }
  return listed.sort((a, b) => a.principal.localeCompare(b.principal) || a.policy.localeCompare(b.policy));
}

function line(p: PrincipalListing): string {
  const u = p.usage;
  return `${JSON.stringify(p.principal).padEnd(24)} ${p.policy.padEnd(12)} ${p.grantId} ${p.status.padEnd(8)} calls ${u.calls.used}/${u.calls.limit}  bytes ${u.inputBytes.used}/${u.inputBytes.limit}`;
}

/** `atc principals`: list, revoke or re-enable the gateway's OAuth principals. */
export async function runPrincipals(args: readonly string[], io: CliIo = processIo, now: () => number = Date.now): Promise<number> {
  const parsed = await parseOrExit(principalsSpec, args, io);
  if (typeof parsed === 'number') return parsed;
  const [verb, principal, ...rest] = parsed.positional;
  const fail = (message: string): number => usageError(principalsSpec, io, message);
  if (verb === undefined) {
    if (!parsed.values.has('ledger')) return fail('--ledger is required');
    return withLedgerAt('principals', parsed.values.get('ledger') as string, { create: false }, (l) => io.err(l), async (ledger) => {
      const listed = listPrincipals(ledger, now());
      if (parsed.flags.has('json')) await io.out(JSON.stringify(listed));
      else for (const p of listed) await io.out(line(p));
      return 0;
    });
  }
  if ((verb !== 'revoke' && verb !== 'enable') || principal === undefined || rest.length !== 0) return fail(`unknown subcommand or arguments: ${verb.slice(0, 40)}`);
  if (verb === 'revoke') {
    if (!parsed.values.has('ledger')) return fail('--ledger is required');
    return withLedgerAt('principals', parsed.values.get('ledger') as string, { create: false }, (l) => io.err(l), async (ledger) => {
      const policyFilter = parsed.values.get('policy');
      const current = listPrincipals(ledger, now()).filter((p) => p.principal === principal && (policyFilter === undefined || p.policy === policyFilter) && p.status !== 'revoked');
      for (const p of current) await ledger.revoke(p.grantId, { abortInFlight: parsed.flags.has('abort') });
      const known = listPrincipals(ledger, now()).some((p) => p.principal === principal);
      if (!known) throw new Error('no grant was ever issued for this principal');
      await io.out(JSON.stringify({ principal, revoked: current.map((p) => p.grantId) }));
      return 0;
    });
  }
  return enable(principal, parsed.values.get('config'), io, now);
}

async function enable(principal: string, configFile: string | undefined, io: CliIo, now: () => number): Promise<number> {
  if (configFile === undefined) {
    io.err('atc principals: enable needs --config <gateway.json> (the policy in force for the principal)');
    return 2;
  }
  const { readGatewayConfigFile } = await import('../../integrations/gateway/configFile');
  const { issuePrincipalGrant, policyNameOf } = await import('../../integrations/gateway/principalGrants');
  const { checkGatewayPolicies } = await import('../../integrations/gateway/gatewayPolicies');
  let config;
  try {
    config = readGatewayConfigFile(configFile);
  } catch (error) {
    io.err(`atc principals: ${(error as Error).message}`);
    return 2;
  }
  const policyName = policyNameOf(config, principal);
  const policy = policyName === undefined ? undefined : config.policies.get(policyName);
  if (policyName === undefined || policy === undefined) {
    io.err('atc principals: the config admits no such principal (and has no "*")');
    return 1;
  }
  let ledger: Ledger;
  try {
    ledger = await openLedgerAt(config.ledger, { create: false });
  } catch (error) {
    io.err(`atc principals: ${(error as Error).message}`);
    return 2;
  }
  try {
    checkGatewayPolicies(config, ledger);
    const grantId = await issuePrincipalGrant(ledger, principal, policyName, policy, now());
    const issued = shardGet(ledger.state().grants, grantId);
    await io.out(JSON.stringify({ principal, policy: policyName, grantId, expiresAt: issued?.scope.expiresAt }));
    return 0;
  } catch (error) {
    io.err(`atc principals: ${(error as Error).message}`);
    return 1;
  } finally {
    await ledger.close();
  }
}

export const principalsCommand: CliCommand = {
  summary: principalsSpec.summary,
  spec: principalsSpec,
  run: (args) => runPrincipals(args),
};

import type { Command } from '../domain/commands';
import { decide } from '../domain/decide';
import type { EventPayload, GrantScope, LedgerEvent, ResourceTemplates } from '../domain/events';
import { ancestorRecords } from '../domain/grantChain';
import { shardGet } from '../domain/shardedMap';
import { initialState } from '../domain/state';
import { TransientState } from '../domain/transientState';
import { policyIssueOptions, type Policy } from '../integrations/mcp/policy';
import { commandFromEvent } from '../verification/commandFromEvent';
import { candidateAsks, diffApprovalAsk } from './candidateApproval';
import { candidateChecks, loggedOutcome, relevantOpen, type CallDecision, type OpenRule, type ToolRules } from './candidateChecks';

export type { OpenRule } from './candidateChecks';

/** A logged decision the candidate would have made otherwise. */
export interface DecisionChange {
  readonly seq: number;
  readonly callId: string;
  readonly grantId?: string;
  readonly tool: string;
  /** For a `ctx.fetch` hop: its number (0 the request, 1… redirects); absent for a call. */
  readonly hop?: number;
  /** 'admitted', 'replayed' or a reject reason; for a hop 'allowed' or its refusal reason. */
  readonly before: string;
  readonly after: string;
  /** Rules the log cannot re-decide that were taken as passing: `after` holds if the call passes them. */
  readonly assuming?: readonly OpenRule[];
}

export interface PolicyDiff {
  /** The root grants the candidate stood in for. */
  readonly grants: readonly string[];
  /** Call decisions of those grants (and their delegated children) re-decided. */
  readonly calls: number;
  readonly changes: readonly DecisionChange[];
  /** Per rule the log cannot re-decide: how many calls' decisions under the candidate depend on it. */
  readonly open: { readonly [R in OpenRule]: number };
  /** Calls logged `ledger_unavailable` (a store failure, not a rule): left as logged. */
  readonly unavailable: number;
  /** Grants the candidate could not be issued in place of (a tool not registered yet there); their calls are left out. */
  readonly refused: readonly { readonly seq: number; readonly grantId: string; readonly message: string }[];
}

interface RootInfo {
  readonly logged: ToolRules['logged'];
  readonly candidate: ToolRules['candidate'];
}

/** The candidate as the scope of a grant issued at `at` (its `expiresIn` counts from there). */
function candidateScope(candidate: Policy, at: number): { scope: GrantScope; templates: ResourceTemplates; fsBase: string | undefined } {
  const o = policyIssueOptions(candidate, at);
  const scope: GrantScope = {
    tools: o.tools, args: o.args ?? {}, resources: o.resources ?? [], notBefore: o.notBefore ?? at, expiresAt: o.expiresAt, budget: o.budget,
    ...(o.callTimeoutMs !== undefined ? { callTimeoutMs: o.callTimeoutMs } : {}),
    ...(o.approvals !== undefined ? { approvals: o.approvals } : {}),
    ...(o.approvalTimeoutMs !== undefined ? { approvalTimeoutMs: o.approvalTimeoutMs } : {}),
  };
  return { scope, templates: o.resourceTemplates ?? {}, fsBase: o.fsBase };
}

/** Says why `grantId` cannot be compared (absent, or a delegated child), or undefined. */
export function diffGrantProblem(events: readonly LedgerEvent[], grantId: string): string | undefined {
  const issued = events.find((e) => e.type === 'grant.issued' && e.grantId === grantId);
  if (issued === undefined) return `the log has no grant ${grantId}`;
  if (issued.type === 'grant.issued' && issued.parentGrantId !== undefined) return `${grantId} is a delegated grant: name its root (${issued.parentGrantId} or above)`;
  return undefined;
}

const rootOfEvent = (e: LedgerEvent, rootOf: ReadonlyMap<string, string>): string | undefined => {
  const id = e.type === 'attenuation.rejected' ? e.parentGrantId : e.type === 'revocation.rejected' ? e.revokedBy : e.type === 'tool.registered' ? undefined : e.grantId;
  return id === undefined ? undefined : rootOf.get(id);
};

/**
 * Re-decides the calls of a verified log as if `candidate` had been issued in place of each root
 * grant (or only `grantId`), with every rule the log lets it re-decide; see docs/policies.md for
 * what is re-decided and what is taken as passing. Pure: no clock, no I/O.
 */
export function diffPolicy(events: readonly LedgerEvent[], candidate: Policy, options: { readonly grantId?: string } = {}): PolicyDiff {
  // One transient fold, as verify's: each trie path is copied once per batch of events.
  const fold = new TransientState(initialState);
  const rootOf = new Map<string, string>();
  const roots = new Map<string, RootInfo>();
  const changes: DecisionChange[] = [];
  const open: Record<OpenRule, number> = { input_schema: 0, argument_narrowing: 0, resources: 0, meters: 0, approvals: 0 };
  const refused: { seq: number; grantId: string; message: string }[] = [];
  let calls = 0;
  let unavailable = 0;
  const apply = (e: LedgerEvent, payloads: readonly EventPayload[]): void => {
    for (const p of payloads) fold.apply({ ...p, seq: e.seq, at: e.at, prevHash: e.prevHash, hash: e.hash } as LedgerEvent);
  };
  const decided = (e: LedgerEvent, command: Command): readonly EventPayload[] | undefined => {
    const d = decide(fold.view, command);
    return d.ok ? d.events : undefined;
  };

  for (const e of events) {
    if (e.type === 'grant.issued') rootOf.set(e.grantId, e.parentGrantId === undefined ? e.grantId : (rootOf.get(e.parentGrantId) ?? e.grantId));
    const root = rootOfEvent(e, rootOf);
    const selected = root !== undefined && (e.type === 'grant.issued' && e.parentGrantId === undefined ? options.grantId === undefined || options.grantId === e.grantId : roots.has(root));
    if (!selected) {
      fold.apply(e);
      continue;
    }
    switch (e.type) {
      case 'grant.issued': {
        if (e.parentGrantId !== undefined) {
          apply(e, decided(e, commandFromEvent(e)) ?? []);
          break;
        }
        const c = candidateScope(candidate, e.at);
        const d = decide(fold.view, { type: 'issue', at: e.at, grantId: e.grantId, tokenDigest: e.tokenDigest, scope: c.scope, resourceTemplates: c.templates, ...(c.fsBase !== undefined ? { fsBase: c.fsBase } : {}) });
        if (!d.ok) {
          refused.push({ seq: e.seq, grantId: e.grantId, message: d.message });
          fold.apply(e);
          break;
        }
        roots.set(e.grantId, { logged: { scope: e.scope, templates: e.resourceTemplates ?? {}, fsBase: e.fsBase }, candidate: c });
        apply(e, d.events);
        break;
      }
      case 'call.admitted':
      case 'call.rejected':
      case 'call.replayed':
      case 'approval.requested':
        calls++;
        if (e.type === 'call.rejected' && e.reason === 'ledger_unavailable') unavailable++;
        else redecideCall(e, roots.get(root) as RootInfo);
        break;
      case 'call.completed':
      case 'call.failed':
        if (shardGet(fold.view.inFlight, e.callId) === undefined) break;
        apply(e, decided(e, commandFromEvent(e)) ?? decided(e, { type: 'settle', at: e.at, callId: e.callId, outcome: 'failed', refund: e.type === 'call.failed' && (e.refunded.calls !== 0 || e.refunded.inputBytes !== 0) }) ?? []);
        break;
      case 'fetch.hop':
        if (shardGet(fold.view.inFlight, e.callId) !== undefined) redecideHop(e);
        break;
      default:
        // Revocations (and refused attenuations/revocations, which change nothing) re-decided on the candidate's tree.
        apply(e, decided(e, commandFromEvent(e)) ?? []);
    }
  }
  return { grants: [...roots.keys()], calls, changes, open, unavailable, refused };

  function redecideCall(e: CallDecision, info: RootInfo): void {
    const grant = e.grantId === undefined ? undefined : shardGet(fold.view.grants, e.grantId);
    const chain = grant === undefined ? [] : [grant, ...(ancestorRecords(fold.view, grant) ?? [])];
    const capsMeters = chain.some((g) => Object.keys(g.scope.budget.meters ?? {}).length > 0);
    const onRoot = grant === undefined || grant.ancestors === undefined;
    const rules: ToolRules = { ...info, onRoot, ...(onRoot || grant === undefined ? {} : { childScopes: grant.scope.resources }) };
    const checks = candidateChecks(e, rules, capsMeters);
    const base = commandFromEvent(e);
    if (base.type !== 'admit') return;
    const { cost: _loggedCost, approval: _loggedAsk, ...rest } = base;
    const asks = candidateAsks(e, info.logged.scope.approvals, info.candidate.scope.approvals, chain.filter((g) => g.ancestors !== undefined));
    const openRules = asks.open ? [...checks.open, 'approvals' as const] : checks.open;
    const payloads = decided(e, { ...rest, argumentCheck: checks.argumentCheck, resourceCheck: checks.resourceCheck, ...(checks.cost !== undefined ? { cost: checks.cost } : {}), ...(asks.asks ? { approval: diffApprovalAsk(e) } : {}) }) ?? [];
    const first = payloads[0];
    const after = first === undefined ? 'refused' : first.type === 'call.admitted' ? 'admitted' : first.type === 'approval.requested' ? 'asked' : first.type === 'call.replayed' ? 'replayed' : first.type === 'call.rejected' ? first.reason : first.type;
    const assuming = relevantOpen(openRules, after);
    for (const rule of assuming) open[rule]++;
    const before = loggedOutcome(e);
    if (before !== after) changes.push({ seq: e.seq, callId: e.callId, ...(e.grantId !== undefined ? { grantId: e.grantId } : {}), tool: e.tool, before, after, ...(assuming.length > 0 ? { assuming } : {}) });
    apply(e, payloads);
  }

  function redecideHop(e: Extract<LedgerEvent, { type: 'fetch.hop' }>): void {
    const payloads = decided(e, commandFromEvent(e)) ?? [];
    const first = payloads[0];
    const after = first?.type === 'fetch.hop' ? (first.outcome === 'allowed' ? 'allowed' : (first.reason ?? 'refused')) : 'refused';
    const before = e.outcome === 'allowed' ? 'allowed' : (e.reason ?? 'refused');
    if (before !== after) changes.push({ seq: e.seq, callId: e.callId, grantId: e.grantId, tool: e.tool, hop: e.hop, before, after });
    apply(e, payloads);
  }
}

import { canonicalJson } from '../domain/canonicalJson';
import type { GrantScope, LedgerEvent, MeterAmounts, ResourceTemplates } from '../domain/events';
import { scopeCovers } from '../domain/resources';
import { rejectReasons, type ArgumentCheck, type RejectReason, type ResourceCheck } from '../domain/reasons';

/** Rules whose outcome a log cannot re-derive for a call: they ran on argument values it never holds. */
export type OpenRule = 'input_schema' | 'argument_narrowing' | 'resources' | 'meters' | 'approvals';

/** A call's decision as logged; `approval.requested` is a call that passed every check and asked a person. */
export type CallDecision = Extract<LedgerEvent, { type: 'call.admitted' | 'call.rejected' | 'call.replayed' | 'approval.requested' }>;

/** What the log's grant and the candidate say about one tool's arguments and resources. */
export interface ToolRules {
  readonly logged: { readonly scope: GrantScope; readonly templates: ResourceTemplates; readonly fsBase: string | undefined };
  readonly candidate: { readonly scope: GrantScope; readonly templates: ResourceTemplates; readonly fsBase: string | undefined };
  /** The call's grant is the root (no delegated narrowings or scopes of its own in the chain). */
  readonly onRoot: boolean;
  /** The call's own grant's scopes (a child keeps its own; the root's are replaced by the candidate's). */
  readonly childScopes?: readonly string[];
}

export interface CandidateChecks {
  readonly argumentCheck: ArgumentCheck;
  readonly resourceCheck: ResourceCheck;
  readonly cost: MeterAmounts | undefined;
  /** Checks taken as passing because the log cannot say; they matter only if the call gets that far. */
  readonly open: readonly OpenRule[];
}

const rank = (reason: RejectReason): number => rejectReasons.indexOf(reason);
/** How far a logged decision got through the checks (admitted: all of them; a replay: past the resources). */
export function stageOf(outcome: string): number {
  if (outcome === 'admitted' || outcome === 'asked') return Number.POSITIVE_INFINITY;
  if (outcome === 'replayed') return rank('idempotency_conflict') + 0.5;
  return rank(outcome as RejectReason);
}
export const stages = { schema: rank('invalid_arguments'), narrowing: rank('argument_not_permitted'), resources: rank('invalid_resource'), meters: rank('meter_budget_exhausted') } as const;

export function loggedOutcome(event: CallDecision): string {
  return event.type === 'call.admitted' ? 'admitted' : event.type === 'call.replayed' ? 'replayed' : event.type === 'approval.requested' ? 'asked' : event.reason;
}

const own = (o: object, key: string): boolean => Object.prototype.hasOwnProperty.call(o, key);
const same = (a: unknown, b: unknown): boolean => canonicalJson(a ?? null) === canonicalJson(b ?? null);
/** Every resource some scope of `inner` covers, some scope of `outer` covers too (the ledger's own coverage rule, scope on scope). */
const within = (inner: readonly string[], outer: readonly string[]): boolean => inner.every((s) => outer.some((c) => scopeCovers(c, s)));

function narrowingCheck(event: CallDecision, rules: ToolRules, outcome: string): ArgumentCheck | 'open' {
  const tool = event.tool;
  const candidate = own(rules.candidate.scope.args, tool) ? rules.candidate.scope.args[tool] : undefined;
  if (candidate === undefined && rules.onRoot) return 'ok'; // no narrowing anywhere in the chain
  if (stageOf(outcome) < stages.narrowing) return 'open';
  const loggedOk = outcome !== 'argument_not_permitted';
  if (same(candidate, own(rules.logged.scope.args, tool) ? rules.logged.scope.args[tool] : undefined)) return loggedOk ? 'ok' : 'argument_not_permitted';
  // Dropping the root's narrowing keeps a call that passed the whole chain passing.
  return candidate === undefined && loggedOk ? 'ok' : 'open';
}

function resourceCheck(event: CallDecision, rules: ToolRules, outcome: string): ResourceCheck | 'open' {
  const tool = event.tool;
  const logged = own(rules.logged.templates, tool) ? rules.logged.templates[tool] : undefined;
  const candidate = own(rules.candidate.templates, tool) ? rules.candidate.templates[tool] : undefined;
  const usesFs = [...(logged ?? []), ...(candidate ?? [])].some((t) => t.startsWith('fs:'));
  // Other templates (or another fsBase) map the same arguments to other resources, which the log does not hold.
  if (!same(logged ?? [], candidate ?? []) || (usesFs && rules.logged.fsBase !== rules.candidate.fsBase)) return 'open';
  if (stageOf(outcome) < stages.resources) return 'open';
  if (outcome === 'invalid_resource') return 'invalid_resource';
  const before = rules.childScopes ?? rules.logged.scope.resources;
  const after = rules.childScopes ?? rules.candidate.scope.resources;
  if (outcome === 'resource_not_permitted') return within(after, before) ? 'resource_not_permitted' : 'open';
  // Passed with no scope at all: the call named no resource.
  return before.length === 0 || within(before, after) ? 'ok' : 'open';
}

/** The tool's `cost(args)` as the log recorded it, or 'unknown' where it was never logged. */
function loggedCost(event: CallDecision): MeterAmounts | undefined | 'unknown' {
  if (event.type === 'call.admitted' || event.type === 'approval.requested') return event.reserved.meters;
  if (event.type === 'call.replayed') return undefined;
  if (event.reason === 'meter_budget_exhausted' || event.reason === 'rate_limited') return event.cost;
  return 'unknown';
}

/**
 * The argument, resource and cost outcomes to re-decide a logged call with under the candidate:
 * the logged outcome where the candidate's rule is the same (or looser, or stricter, in a way
 * that settles it), else taken as passing and named in `open`.
 */
export function candidateChecks(event: CallDecision, rules: ToolRules, chainCapsMeters: boolean): CandidateChecks {
  const outcome = loggedOutcome(event);
  const open: OpenRule[] = [];
  let argumentCheck: ArgumentCheck = 'ok';
  if (stageOf(outcome) < stages.schema) open.push('input_schema');
  else if (outcome === 'invalid_arguments') argumentCheck = 'invalid_arguments';
  if (argumentCheck === 'ok') {
    const narrowing = narrowingCheck(event, rules, outcome);
    if (narrowing === 'open') open.push('argument_narrowing');
    else argumentCheck = narrowing;
  }
  const resources = resourceCheck(event, rules, outcome);
  if (resources === 'open') open.push('resources');
  const cost = loggedCost(event);
  if (cost === 'unknown' && chainCapsMeters) open.push('meters');
  return { argumentCheck, resourceCheck: resources === 'open' ? 'ok' : resources, cost: cost === 'unknown' ? undefined : cost, open };
}

/** The open rules that could have decided a call the candidate decided `after`. */
export function relevantOpen(open: readonly OpenRule[], after: string): OpenRule[] {
  const reached = stageOf(after);
  const stageFor: Readonly<Record<OpenRule, number>> = { input_schema: stages.schema, argument_narrowing: stages.narrowing, resources: stages.resources, meters: stages.meters, approvals: Number.POSITIVE_INFINITY };
  return open.filter((rule) => reached >= stageFor[rule] && !(rule === 'meters' && after === 'replayed') && !(rule === 'approvals' && after !== 'admitted' && after !== 'asked'));
}

import type { JsonObject, JsonValue } from '../domain/json';
import { parsePolicy, PolicyError, type Policy } from '../integrations/mcp/policy';
import { SchemaCompiler } from '../tools/schemas';
import { declaredNames } from './declaredNames';
import { undeclaredInNarrowing } from './narrowingRules';
import { fieldPointer, pointer } from './pointer';
import { scopeReachable, templateArguments } from './templateReach';
import { unboundTools } from './unboundTools';
import { approvalRuleProblems, approvalsNotGranted } from './approvalRules';

/** What `checkPolicy` can find. */
export type PolicyProblemCode =
  | 'malformed' // the policy does not parse (the message names the field)
  | 'unknown_tool' // a tool the upstream does not list (or the log does not hold)
  | 'undeclared_property' // a narrowing names a property the tool's inputSchema does not declare
  | 'narrowing_invalid' // a narrowing that does not compile (unknown keyword or format)
  | 'undeclared_argument' // a resource template names an argument the inputSchema does not declare
  | 'unbound_tool' // a granted tool with no template while the policy has fs:/url: scopes
  | 'unreachable_scope' // a scope no template can produce a resource under
  | 'zero_budget' // budget.calls or budget.inputBytes is 0: every call is refused
  | 'expired' // expiresAt is not after now
  | 'approval_not_granted' // an approval rule on a tool the policy does not grant
  | 'approval_invalid'; // an approval schema that does not compile

export interface PolicyProblem {
  /** JSON Pointer (RFC 6901) into the policy; '' for the whole policy. */
  readonly pointer: string;
  readonly code: PolicyProblemCode;
  readonly message: string;
}

/** A tool as an upstream lists it (MCP `tools/list`) or a log's `tool.registered` holds it. */
export interface PolicyTool {
  readonly name: string;
  readonly inputSchema: JsonObject;
}

export interface CheckPolicyOptions {
  /** ms since epoch: what "already past" means for `expiresAt`. */
  readonly now: number;
}

/**
 * Lints a policy (any value: a parsed file, a gateway config's entry) against the tools it will be
 * used with. `tools` undefined: no tool list, so the rules that need one (unknown tools, undeclared
 * properties and arguments) are skipped. Never throws; problems in policy order.
 */
export function checkPolicy(policy: unknown, tools: readonly PolicyTool[] | undefined, options: CheckPolicyOptions): PolicyProblem[] {
  let parsed: Policy;
  let unbound: PolicyProblem[] = [];
  let ungranted: PolicyProblem[] = [];
  try {
    const text = JSON.stringify(policy);
    if (typeof text !== 'string') return [{ pointer: '', code: 'malformed', message: 'the policy is not a JSON object' }];
    unbound = unboundTools(JSON.parse(text) as unknown);
    ungranted = approvalsNotGranted(JSON.parse(text) as unknown);
    parsed = parsePolicy(text);
  } catch (error) {
    // A parser that refuses unbound tools itself names `resources`: the rule's own pointers say more.
    if (error instanceof PolicyError && error.field === 'resources' && unbound.length > 0) return unbound;
    if (error instanceof PolicyError && error.field.startsWith('approvals[') && ungranted.length > 0) return [...unbound, ...ungranted];
    if (error instanceof PolicyError) return [{ pointer: fieldPointer(error.field), code: 'malformed', message: error.message }];
    return [{ pointer: '', code: 'malformed', message: 'the policy is not JSON' }];
  }
  const schemas = tools === undefined ? undefined : new Map(tools.map((t) => [t.name, t.inputSchema]));
  return [...toolProblems(parsed, schemas), ...unbound, ...narrowingProblems(parsed, schemas), ...templateProblems(parsed, schemas), ...scopeProblems(parsed), ...budgetProblems(parsed), ...expiryProblems(parsed, options.now), ...(parsed.approvals !== undefined ? approvalRuleProblems(parsed, schemas, new SchemaCompiler()) : [])];
}

function toolProblems(policy: Policy, schemas: ReadonlyMap<string, JsonObject> | undefined): PolicyProblem[] {
  if (schemas === undefined) return [];
  return policy.tools.flatMap((tool, i) => (schemas.has(tool) ? [] : [{ pointer: pointer('tools', i), code: 'unknown_tool' as const, message: `${JSON.stringify(tool)} is not a tool the upstream lists or the log registered` }]));
}

function narrowingProblems(policy: Policy, schemas: ReadonlyMap<string, JsonObject> | undefined): PolicyProblem[] {
  const problems: PolicyProblem[] = [];
  const entries = Object.entries(policy.args ?? {});
  // One compiler per check (it caches every schema it compiles), made only when there is a narrowing.
  const compiler = entries.length > 0 ? new SchemaCompiler() : undefined;
  for (const [tool, narrowing] of entries) {
    try {
      compiler?.compileNarrowing(narrowing);
    } catch (error) {
      problems.push({ pointer: pointer('args', tool), code: 'narrowing_invalid', message: `does not compile: ${(error as Error).message}` });
      continue;
    }
    const inputSchema = schemas?.get(tool);
    if (inputSchema === undefined) continue;
    for (const use of undeclaredInNarrowing(narrowing, inputSchema)) {
      const message =
        use.kind === 'property'
          ? `narrows property ${JSON.stringify(use.name)}, which the inputSchema of ${JSON.stringify(tool)} does not declare: the rule constrains nothing`
          : `requires property ${JSON.stringify(use.name)}, which the inputSchema of ${JSON.stringify(tool)} does not declare: every call would be refused`;
      problems.push({ pointer: pointer('args', tool, ...use.at), code: 'undeclared_property', message });
    }
  }
  return problems;
}

function templateProblems(policy: Policy, schemas: ReadonlyMap<string, JsonObject> | undefined): PolicyProblem[] {
  const problems: PolicyProblem[] = [];
  for (const [tool, templates] of Object.entries(policy.resources ?? {})) {
    const declared = declaredNames(schemas?.get(tool));
    if (declared === undefined) continue;
    templates.forEach((template, i) => {
      for (const name of templateArguments(template)) {
        if (!declared.has(name)) problems.push({ pointer: pointer('resources', tool, i), code: 'undeclared_argument', message: `names argument ${JSON.stringify(name)}, which the inputSchema of ${JSON.stringify(tool)} does not declare: every call would be invalid_resource` });
      }
    });
  }
  return problems;
}

/** Scopes no template can reach allow nothing (unbound tools: unboundTools.ts). */
function scopeProblems(policy: Policy): PolicyProblem[] {
  const templates = Object.values(policy.resources ?? {}).flat();
  return (policy.scopes ?? []).flatMap((scope, i) =>
    templates.some((t) => scopeReachable(t, scope)) ? [] : [{ pointer: pointer('scopes', i), code: 'unreachable_scope' as const, message: 'no resource template can name a resource under this scope, so it allows nothing' }],
  );
}

function budgetProblems(policy: Policy): PolicyProblem[] {
  return (['calls', 'inputBytes'] as const).flatMap((field) =>
    policy.budget[field] === 0 ? [{ pointer: pointer('budget', field), code: 'zero_budget' as const, message: `is 0: every call would be refused (${field === 'calls' ? 'call' : 'byte'}_budget_exhausted)` }] : [],
  );
}

function expiryProblems(policy: Policy, now: number): PolicyProblem[] {
  if (policy.expiresAt === undefined) return [];
  const value: JsonValue = policy.expiresAt;
  const at = typeof value === 'number' ? value : /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  return at <= now ? [{ pointer: pointer('expiresAt'), code: 'expired', message: `${new Date(at).toISOString()} is already past: a grant issued from it is expired` }] : [];
}

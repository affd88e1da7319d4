import type { GrantScope, ResourceTemplates } from './events';
import { approvalRulesProblem } from './approvalSpec';
import { limits } from './limits';
import { meterAmountsProblem } from './meters';
import { isCanonicalScope } from './resources';
import type { LedgerState } from './state';

function isBudgetAmount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** A call timeout: a positive safe integer of ms. */
export function isTimeout(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

function isTime(value: unknown): value is number {
  // Number.isFinite is false for every non-number (it does not convert).
  return Number.isFinite(value);
}

/**
 * Says what is wrong with a grant scope, or undefined when it is well formed for this state.
 * Messages name fields and tools, never tokens.
 */
export function grantScopeProblem(state: LedgerState, scope: GrantScope): string | undefined {
  // decide is public: a caller may hand it any value, and a refusal must name the field, not throw.
  if (scope === null || typeof scope !== 'object' || Array.isArray(scope)) return 'scope must be an object';
  if (!Array.isArray(scope.tools) || scope.tools.length === 0) return 'tools must be a non-empty array of tool names';
  if (scope.tools.length > limits.toolsPerGrantMax) return `tools may hold at most ${limits.toolsPerGrantMax} names`;
  const seen = new Set<string>();
  for (const tool of scope.tools) {
    if (typeof tool !== 'string' || !Object.prototype.hasOwnProperty.call(state.tools, tool)) {
      return `tool ${JSON.stringify(String(tool)).slice(0, 80)} is not registered`;
    }
    if (seen.has(tool)) return `tool ${JSON.stringify(tool)} is listed twice`;
    seen.add(tool);
  }
  if (scope.args === null || typeof scope.args !== 'object' || Array.isArray(scope.args)) return 'args must be an object of narrowing schemas keyed by tool name';
  for (const [tool, schema] of Object.entries(scope.args)) {
    if (!seen.has(tool)) return `args names tool ${JSON.stringify(tool).slice(0, 80)}, which the grant does not include`;
    if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return `args[${JSON.stringify(tool)}] must be a JSON Schema object`;
  }
  if (!Array.isArray(scope.resources)) return 'resources must be an array of canonical scopes';
  if (scope.resources.length > limits.scopesPerGrantMax) return `resources may hold at most ${limits.scopesPerGrantMax} scopes`;
  for (const [i, resource] of scope.resources.entries()) {
    if (!isCanonicalScope(resource)) return `resources[${i}] is not a canonical scope (scheme:/path, no '.', '..', empty segments, '%', '\\', control or non-NFKC characters)`;
  }
  if (!isTime(scope.notBefore)) return 'notBefore must be a finite number of ms since epoch';
  if (!isTime(scope.expiresAt)) return 'expiresAt is required and must be a finite number of ms since epoch';
  if (!(scope.expiresAt > scope.notBefore)) return 'expiresAt must be after notBefore';
  if (scope.budget === null || typeof scope.budget !== 'object') return 'budget must be { calls, inputBytes }';
  if (!isBudgetAmount(scope.budget.calls)) return 'budget.calls must be a non-negative safe integer';
  if (!isBudgetAmount(scope.budget.inputBytes)) return 'budget.inputBytes must be a non-negative safe integer';
  if (scope.callTimeoutMs !== undefined && !isTimeout(scope.callTimeoutMs)) return 'callTimeoutMs must be a positive safe integer (ms)';
  const budget = scope.budget as unknown as Record<string, unknown>;
  for (const key of Object.keys(budget)) if (!budgetKeys.has(key)) return 'budget may hold only calls, inputBytes, meters and rate';
  if (budget.meters !== undefined) {
    const problem = meterAmountsProblem(budget.meters, 'budget.meters');
    if (problem !== undefined) return problem;
  }
  if (budget.rate !== undefined) {
    const problem = rateProblem(budget.rate);
    if (problem !== undefined) return problem;
  }
  return approvalRulesProblem(scope);
}

const budgetKeys = new Set(['calls', 'inputBytes', 'meters', 'rate']);

/** What is wrong with a rate window `{ calls, windowMs }`, or undefined. */
export function rateProblem(rate: unknown): string | undefined {
  if (rate === null || typeof rate !== 'object' || Array.isArray(rate)) return 'budget.rate must be { calls, windowMs }';
  const r = rate as Record<string, unknown>;
  for (const key of Object.keys(r)) if (key !== 'calls' && key !== 'windowMs') return 'budget.rate may hold only calls and windowMs';
  if (!isBudgetAmount(r.calls) || r.calls < 1 || r.calls > limits.rateCallsMax) return `budget.rate.calls must be an integer from 1 to ${limits.rateCallsMax}`;
  if (!isBudgetAmount(r.windowMs) || r.windowMs < 1) return 'budget.rate.windowMs must be a positive safe integer';
  return undefined;
}

/** Says what is wrong with a grant's recorded resource templates (their shape only; shells evaluate them). */
export function resourceTemplatesProblem(scope: GrantScope, templates: ResourceTemplates | undefined, fsBase: string | undefined): string | undefined {
  if (fsBase !== undefined && (typeof fsBase !== 'string' || !fsBase.startsWith('/') || fsBase.length > 4_096)) return 'fsBase must be an absolute directory path of at most 4,096 characters';
  if (templates === undefined) return undefined;
  if (templates === null || typeof templates !== 'object' || Array.isArray(templates)) return 'resourceTemplates must be an object of template lists keyed by tool name';
  for (const [tool, list] of Object.entries(templates)) {
    if (!scope.tools.includes(tool)) return `resourceTemplates names tool ${JSON.stringify(tool).slice(0, 80)}, which the grant does not include`;
    if (!Array.isArray(list) || list.length > limits.resourcesPerCallMax) return `resourceTemplates[${JSON.stringify(tool)}] must be an array of at most ${limits.resourcesPerCallMax} templates`;
    for (const template of list) {
      if (typeof template !== 'string' || template.length === 0 || template.length > limits.resourceBytesMax) return `resourceTemplates[${JSON.stringify(tool)}] must hold non-empty strings of at most ${limits.resourceBytesMax} characters`;
    }
  }
  return undefined;
}

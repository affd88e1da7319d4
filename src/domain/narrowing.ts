import type { Narrowing } from './commands';
import type { JsonObject } from './json';
import { isTimeout } from './grantSpec';
import { limits } from './limits';
import { rateProblem } from './grantSpec';
import { meterAmountsProblem } from './meters';
import type { ApprovalRules, MeterAmounts, RateLimit } from './events';

export type ParsedNarrowing = { readonly ok: true; readonly narrowing: Narrowing } | { readonly ok: false; readonly problem: string };

const fields = new Set(['tools', 'args', 'resources', 'notBefore', 'expiresAt', 'budget', 'callTimeoutMs', 'approvals', 'approvalTimeoutMs']);
const budgetFields = new Set(['calls', 'inputBytes', 'meters', 'rate']);

const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);
const isAmount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
// Number.isFinite is false for every non-number (it does not convert).
const isTime = (v: unknown): v is number => Number.isFinite(v);
const own = (o: object, key: string): boolean => Object.prototype.hasOwnProperty.call(o, key);

/**
 * Reads an agent's attenuation request (a plain JSON snapshot, already bounded in size and depth)
 * into a `Narrowing`, or names what is malformed. Pure and total: the request is hostile, so
 * nothing here throws; the problem names fields, never values.
 */
export function parseNarrowing(request: JsonObject): ParsedNarrowing {
  const fail = (problem: string): ParsedNarrowing => ({ ok: false, problem });
  for (const key of Object.keys(request)) {
    if (!fields.has(key)) return fail('the request has a field attenuate does not know');
  }
  const out: { -readonly [K in keyof Narrowing]: Narrowing[K] } = {};
  if (own(request, 'tools')) {
    const tools = request.tools;
    if (!Array.isArray(tools) || tools.length > limits.toolsPerGrantMax || !tools.every((t) => typeof t === 'string')) {
      return fail(`tools must be an array of at most ${limits.toolsPerGrantMax} tool names`);
    }
    out.tools = tools as readonly string[];
  }
  if (own(request, 'args')) {
    const args = request.args;
    if (!isObject(args)) return fail('args must be an object of narrowing schemas keyed by tool name');
    for (const key of Object.keys(args)) {
      const schema = args[key];
      if (!isObject(schema)) return fail('args must map each tool to a JSON Schema object');
    }
    out.args = args as { readonly [tool: string]: JsonObject };
  }
  if (own(request, 'resources')) {
    const resources = request.resources;
    if (!Array.isArray(resources) || resources.length > limits.scopesPerGrantMax || !resources.every((r) => typeof r === 'string')) {
      return fail(`resources must be an array of at most ${limits.scopesPerGrantMax} canonical scopes`);
    }
    out.resources = resources as readonly string[];
  }
  for (const key of ['notBefore', 'expiresAt'] as const) {
    if (!own(request, key)) continue;
    const time = request[key];
    if (!isTime(time)) return fail(`${key} must be a finite number of ms since epoch`);
    out[key] = time;
  }
  if (own(request, 'callTimeoutMs')) {
    if (!isTimeout(request.callTimeoutMs)) return fail('callTimeoutMs must be a positive safe integer (ms)');
    out.callTimeoutMs = request.callTimeoutMs;
  }
  if (own(request, 'approvalTimeoutMs')) {
    if (!isTimeout(request.approvalTimeoutMs)) return fail('approvalTimeoutMs must be a positive safe integer (ms)');
    out.approvalTimeoutMs = request.approvalTimeoutMs;
  }
  if (own(request, 'approvals')) {
    const approvals = request.approvals;
    if (!isObject(approvals)) return fail('approvals must be an object of rules keyed by tool name');
    for (const key of Object.keys(approvals)) {
      const rule = approvals[key];
      if (rule !== true && !isObject(rule)) return fail('approvals must map each tool to true or a JSON Schema object');
    }
    out.approvals = approvals as ApprovalRules;
  }
  if (own(request, 'budget')) {
    const budget = request.budget;
    if (!isObject(budget)) return fail('budget must be an object');
    const amounts: { calls?: number; inputBytes?: number; meters?: MeterAmounts; rate?: RateLimit } = {};
    for (const key of Object.keys(budget)) {
      if (!budgetFields.has(key)) return fail('budget has a field attenuate does not know');
      if (key === 'meters') {
        const problem = meterAmountsProblem(budget.meters, 'budget.meters');
        if (problem !== undefined) return fail(problem);
        amounts.meters = budget.meters as unknown as MeterAmounts;
        continue;
      }
      if (key === 'rate') {
        const problem = rateProblem(budget.rate);
        if (problem !== undefined) return fail(problem);
        amounts.rate = budget.rate as unknown as RateLimit;
        continue;
      }
      const amount = budget[key];
      if (!isAmount(amount)) return fail(`budget.${key} must be a non-negative safe integer`);
      amounts[key as 'calls' | 'inputBytes'] = amount;
    }
    out.budget = amounts;
  }
  return { ok: true, narrowing: out };
}

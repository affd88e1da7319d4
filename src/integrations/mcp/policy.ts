import Ajv, { type ErrorObject } from 'ajv';
import { limits, meterNamePattern } from '../../domain/limits';
import { isCanonicalScope } from '../../domain/resources';
import type { JsonObject } from '../../domain/json';
import type { ApprovalRules } from '../../domain/events';
import type { IssueOptions, Ledger } from '../../stream/types';
import { templateProblem } from './resourceTemplates';
import { templateCoverageProblem } from './templateCoverage';

/** The MCP server `atc proxy` and `atc issue` start (or reach) when the command line names none. */
export type PolicyUpstream = { readonly command: readonly string[] } | { readonly url: string };

/**
 * A policy file: one grant, as JSON. Only what the ledger enforces is accepted. */
export interface Policy {
  /** The upstream MCP server (docs/mcp.md): a command line as an array (no shell), or a URL. */
  readonly upstream?: PolicyUpstream;
  readonly tools: readonly string[];
  readonly args?: { readonly [tool: string]: JsonObject };
  /** Per tool, templates over argument names: `"fs:{path}"`, `"fs:{paths[]}"`, `"url:{url}"`, `"notes:/{path}"`. */
  readonly resources?: { readonly [tool: string]: readonly string[] };
  /** Canonical scopes the resources must fall under. */
  readonly scopes?: readonly string[];
  /** Directory that relative `fs:` paths resolve against; without it a relative path is refused. */
  readonly fsBase?: string;
  /** e.g. "8h", "30m", "45s", "2d", "500ms". One of expiresIn / expiresAt is required. */
  readonly expiresIn?: string;
  /** ISO 8601 time or ms since epoch. */
  readonly expiresAt?: string | number;
  readonly notBefore?: string | number;
  /** Ms a call may run before the ledger settles it `call.failed` with `timedOut: true`. */
  readonly callTimeoutMs?: number;
  /** Per tool, when a call waits for a person: `true`, or a JSON Schema its arguments must match (docs/approvals.md). */
  readonly approvals?: ApprovalRules;
  /** Ms a call may wait for its approval (log time); default: the ledger's. */
  readonly approvalTimeoutMs?: number;
  readonly budget: {
    readonly calls: number;
    readonly inputBytes: number;
    /** Caps per named meter (docs/budgets.md); charged by tools that declare a cost. */
    readonly meters?: { readonly [meter: string]: number };
    /** A sliding window: at most `calls` admissions in any `windowMs`. */
    readonly rate?: { readonly calls: number; readonly windowMs: number };
  };
}

export const policyBytesMax = 1_048_576;

const time = { oneOf: [{ type: 'string', minLength: 1, maxLength: 64 }, { type: 'number' }] };
const count = { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER };
const toolName = { type: 'string', minLength: 1, maxLength: 128 };
const schema = {
  type: 'object',
  additionalProperties: false,
  required: ['tools', 'budget'],
  properties: {
    $schema: { type: 'string' },
    upstream: {
      oneOf: [
        { type: 'object', additionalProperties: false, required: ['command'], properties: { command: { type: 'array', minItems: 1, maxItems: 256, items: { type: 'string', minLength: 1, maxLength: 4096 } } } },
        { type: 'object', additionalProperties: false, required: ['url'], properties: { url: { type: 'string', minLength: 1, maxLength: 4096 } } },
      ],
    },
    tools: { type: 'array', minItems: 1, maxItems: 1024, items: toolName },
    args: { type: 'object', maxProperties: 1024, additionalProperties: { type: 'object' } },
    resources: { type: 'object', maxProperties: 1024, additionalProperties: { type: 'array', maxItems: 256, items: { type: 'string', minLength: 1, maxLength: 1024 } } },
    scopes: { type: 'array', maxItems: 1024, items: { type: 'string', maxLength: 1024 } },
    fsBase: { type: 'string', minLength: 1, maxLength: 4096 },
    expiresIn: { type: 'string', maxLength: 32 },
    expiresAt: time,
    notBefore: time,
    callTimeoutMs: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
    approvals: { type: 'object', maxProperties: 1024, additionalProperties: { anyOf: [{ const: true }, { type: 'object' }] } },
    approvalTimeoutMs: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
    budget: {
      type: 'object',
      additionalProperties: false,
      required: ['calls', 'inputBytes'],
      properties: {
        calls: count,
        inputBytes: count,
        meters: { type: 'object', maxProperties: limits.metersPerGrantMax, propertyNames: { pattern: meterNamePattern.source }, additionalProperties: count },
        rate: {
          type: 'object',
          additionalProperties: false,
          required: ['calls', 'windowMs'],
          properties: { calls: { type: 'integer', minimum: 1, maximum: limits.rateCallsMax }, windowMs: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER } },
        },
      },
    },
  },
} as const;

const validate = new Ajv({ allErrors: false, strict: true }).compile(schema);

/** The fields of an ajv error path, as a reader writes them: `/scopes/0` → `scopes[0]`. */
function fieldOf(error: ErrorObject): string {
  const parts = error.instancePath.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (error.keyword === 'additionalProperties') parts.push(String((error.params as { additionalProperty: string }).additionalProperty));
  if (error.keyword === 'required') parts.push(String((error.params as { missingProperty: string }).missingProperty));
  // A key refused by `propertyNames` (a meter name): ajv names it on the error or in its params.
  const key = error.propertyName ?? (error.params as { propertyName?: string }).propertyName;
  if (key !== undefined) parts.push(key);
  let field = '';
  for (const part of parts) field += /^\d+$/.test(part) ? `[${part}]` : /^[A-Za-z_$][\w$]*$/.test(part) ? (field === '' ? part : `.${part}`) : `[${JSON.stringify(part)}]`;
  return field === '' ? '(policy)' : field;
}

export class PolicyError extends Error {
  override readonly name = 'PolicyError';
  constructor(readonly field: string, message: string) {
    super(`policy ${field}: ${message}`);
  }
}

const durationPattern = /^(\d{1,12})(ms|s|m|h|d)$/;
const unitMs: { readonly [unit: string]: number } = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

function parseTime(value: string | number, field: string): number {
  const ms = typeof value === 'number' ? value : /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isFinite(ms)) throw new PolicyError(field, 'must be an ISO 8601 time or ms since epoch');
  return ms;
}

/** Parses and checks a policy file's text; throws `PolicyError` naming the first wrong field. */
export function parsePolicy(text: string): Policy {
  if (Buffer.byteLength(text, 'utf8') > policyBytesMax) throw new PolicyError('(policy)', `is larger than ${policyBytesMax} bytes`);
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (error) {
    throw new PolicyError('(policy)', `is not JSON (${(error as Error).message})`);
  }
  if (!validate(value)) {
    const error = (validate.errors as ErrorObject[])[0] as ErrorObject;
    const field = fieldOf(error);
    const message = error.keyword === 'additionalProperties' ? 'is not a policy field' : error.keyword === 'propertyNames' || error.keyword === 'pattern' ? `is not a meter name (${meterNamePattern})` : (error.message ?? 'is malformed');
    throw new PolicyError(field, message);
  }
  const policy = value as Policy;
  const tools = new Set<string>();
  for (const [i, tool] of policy.tools.entries()) {
    if (tools.has(tool)) throw new PolicyError(`tools[${i}]`, `lists ${JSON.stringify(tool)} twice`);
    tools.add(tool);
  }
  for (const tool of Object.keys(policy.args ?? {})) {
    if (!tools.has(tool)) throw new PolicyError(`args[${JSON.stringify(tool)}]`, 'names a tool that is not in tools');
  }
  for (const tool of Object.keys(policy.approvals ?? {})) {
    if (!tools.has(tool)) throw new PolicyError(`approvals[${JSON.stringify(tool)}]`, 'names a tool that is not in tools');
  }
  for (const [tool, templates] of Object.entries(policy.resources ?? {})) {
    if (!tools.has(tool)) throw new PolicyError(`resources[${JSON.stringify(tool)}]`, 'names a tool that is not in tools');
    for (const [i, template] of templates.entries()) {
      const problem = templateProblem(template);
      if (problem !== undefined) throw new PolicyError(`resources[${JSON.stringify(tool)}][${i}]`, problem);
    }
  }
  for (const [i, scope] of (policy.scopes ?? []).entries()) {
    if (!isCanonicalScope(scope)) throw new PolicyError(`scopes[${i}]`, "is not a canonical scope (scheme:/path, no '.', '..', empty segments, '%', '\\', control or non-NFKC characters)");
  }
  const uncovered = templateCoverageProblem(policy.tools, policy.scopes ?? [], policy.resources ?? {});
  if (uncovered !== undefined) throw new PolicyError('resources', uncovered);
  if (policy.fsBase !== undefined && !policy.fsBase.startsWith('/')) throw new PolicyError('fsBase', 'must be an absolute directory path');
  if ((policy.expiresIn === undefined) === (policy.expiresAt === undefined)) throw new PolicyError('expiresIn', 'give exactly one of expiresIn or expiresAt');
  if (policy.expiresIn !== undefined && !durationPattern.test(policy.expiresIn)) throw new PolicyError('expiresIn', 'must be a whole number with a unit: ms, s, m, h or d (e.g. "8h")');
  if (policy.expiresAt !== undefined) parseTime(policy.expiresAt, 'expiresAt');
  if (policy.notBefore !== undefined) parseTime(policy.notBefore, 'notBefore');
  return policy;
}

/** Checks that every tool a policy names is known and every template names a declared argument. */
export function checkPolicyTools(policy: Policy, inputSchemas: ReadonlyMap<string, JsonObject>): void {
  for (const [i, tool] of policy.tools.entries()) {
    if (!inputSchemas.has(tool)) throw new PolicyError(`tools[${i}]`, `${JSON.stringify(tool)} is not a tool the upstream lists or the log registered`);
  }
  for (const [tool, templates] of Object.entries(policy.resources ?? {})) {
    const declared = (inputSchemas.get(tool)?.properties ?? {}) as JsonObject;
    for (const [i, template] of templates.entries()) {
      for (const name of placeholderNames(template)) {
        if (!Object.prototype.hasOwnProperty.call(declared, name)) throw new PolicyError(`resources[${JSON.stringify(tool)}][${i}]`, `names argument ${JSON.stringify(name)}, which ${tool}'s inputSchema does not declare`);
      }
    }
  }
}

function placeholderNames(template: string): string[] {
  return Array.from(template.matchAll(/\{([^{}[\]]+)(\[\])?\}/g), (m) => m[1] as string);
}

/** The `issue` options for a policy at time `now` (its `expiresIn` counts from there). */
export function policyIssueOptions(policy: Policy, now: number): IssueOptions {
  const expiresAt = policy.expiresAt !== undefined ? parseTime(policy.expiresAt, 'expiresAt') : now + durationMs(policy.expiresIn as string);
  return {
    tools: policy.tools,
    budget: policy.budget,
    expiresAt,
    ...(policy.args !== undefined ? { args: policy.args } : {}),
    ...(policy.scopes !== undefined ? { resources: policy.scopes } : {}),
    ...(policy.notBefore !== undefined ? { notBefore: parseTime(policy.notBefore, 'notBefore') } : {}),
    ...(policy.resources !== undefined ? { resourceTemplates: policy.resources } : {}),
    ...(policy.fsBase !== undefined ? { fsBase: policy.fsBase } : {}),
    ...(policy.callTimeoutMs !== undefined ? { callTimeoutMs: policy.callTimeoutMs } : {}),
    ...(policy.approvals !== undefined ? { approvals: policy.approvals } : {}),
    ...(policy.approvalTimeoutMs !== undefined ? { approvalTimeoutMs: policy.approvalTimeoutMs } : {}),
  };
}

function durationMs(text: string): number {
  const [, amount, unit] = durationPattern.exec(text) as RegExpExecArray;
  return Number(amount) * (unitMs[unit as string] as number);
}

/** The tool schemas the log has registered (after an upstream's tools were registered). */
export function registeredSchemas(ledger: Ledger): Map<string, JsonObject> {
  return new Map(Object.values(ledger.state().tools).map((t) => [t.name, t.inputSchema]));
}

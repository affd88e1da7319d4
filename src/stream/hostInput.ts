import { canonicalJson } from '../domain/canonicalJson';
import type { Command } from '../domain/commands';
import type { ApprovalRules, GrantScope, PrincipalRef, ResourceTemplates } from '../domain/events';
import type { JsonObject } from '../domain/json';
import { toolNamePattern } from '../domain/limits';
import type { LedgerState } from '../domain/state';
import type { ArgumentValidator } from '../tools/schemas';
import { inputSchemaOf, undeclaredNarrowingProblem } from './narrowingChecks';
import type { ScopeInterner } from './scopeInterner';
import { approvalRulesCompileProblem } from './approvalHost';
import type { ToolRegistry } from './toolRegistry';
import type { IssueOptions, ToolDefinition } from './types';

/**
 * The host's input, checked before anything is queued: a host mistake throws TypeError here (it is
 * trusted code, but its objects are copied so a later mutation changes nothing that was checked).
 */

export interface CheckedTool {
  readonly definition: ToolDefinition<JsonObject, unknown>;
  readonly inputSchema: JsonObject;
  readonly validate: ArgumentValidator;
}

export function checkToolDefinition(registry: ToolRegistry, tool: unknown): CheckedTool {
  const definition = tool as ToolDefinition<JsonObject, unknown>;
  if (definition === null || typeof definition !== 'object') throw new TypeError('registerTool needs a tool definition object');
  if (typeof definition.name !== 'string' || !toolNamePattern.test(definition.name)) throw new TypeError(`tool name must match ${toolNamePattern}`);
  if (registry.has(definition.name)) throw new TypeError(`tool ${definition.name} is already registered by this ledger`);
  if (typeof definition.run !== 'function') throw new TypeError(`tool ${definition.name} needs a run function`);
  if (definition.resources !== undefined && typeof definition.resources !== 'function') throw new TypeError(`tool ${definition.name}: resources must be a function`);
  if (definition.cost !== undefined && typeof definition.cost !== 'function') throw new TypeError(`tool ${definition.name}: cost must be a function`);
  const inputSchema = hostJson(definition.inputSchema, `tool ${definition.name}: inputSchema`);
  if (inputSchema.type !== undefined && inputSchema.type !== 'object') throw new TypeError(`tool ${definition.name}: inputSchema must describe an object`);
  let validate;
  try {
    validate = registry.compiler.compileToolSchema(inputSchema);
  } catch (error) {
    throw new TypeError(`tool ${definition.name}: inputSchema does not compile: ${(error as Error).message}`);
  }
  return { definition, inputSchema, validate };
}

/** An issue's argument narrowings: each compiles and names only properties the tool declares. */
export function checkIssueArgs(registry: ToolRegistry, state: LedgerState, options: IssueOptions): JsonObject {
  if (options === null || typeof options !== 'object') throw new TypeError('issue needs an options object');
  const args = hostJson(options.args ?? {}, 'args');
  for (const [tool, schema] of Object.entries(args)) {
    if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) throw new TypeError(`args[${JSON.stringify(tool)}] must be a JSON Schema object`);
    try {
      registry.compiler.compileNarrowing(schema as JsonObject);
    } catch (error) {
      throw new TypeError(`args[${JSON.stringify(tool)}] does not compile: ${(error as Error).message}`);
    }
    const undeclared = undeclaredNarrowingProblem(inputSchemaOf(state, tool), tool, schema as JsonObject);
    if (undeclared !== undefined) throw new TypeError(undeclared);
  }
  return args;
}

/** The host's approval rules, copied, each schema compiled as a narrowing (host bounds) and naming only declared properties. */
export function checkIssueApprovals(registry: ToolRegistry, state: LedgerState, options: IssueOptions): ApprovalRules | undefined {
  if (options.approvals === undefined) return undefined;
  const rules = hostJson(options.approvals, 'approvals');
  const problem = approvalRulesCompileProblem(registry.compiler, rules, 'host', (tool) => inputSchemaOf(state, tool));
  if (problem !== undefined) throw new TypeError(problem);
  return rules as ApprovalRules;
}

export function issueTemplates(options: IssueOptions): ResourceTemplates | undefined {
  return options.resourceTemplates === undefined ? undefined : (hostJson(options.resourceTemplates, 'resourceTemplates') as unknown as ResourceTemplates);
}

/** What `issue` decided before queueing: the new grant's id and digest, its narrowings and templates. */
export interface IssuePlan {
  readonly grantId: string;
  readonly tokenDigest: string;
  readonly args: JsonObject;
  readonly templates: ResourceTemplates | undefined;
  readonly principal: PrincipalRef | undefined;
  /** Checked approval rules (checkIssueApprovals), when the host set any. */
  readonly approvals?: ApprovalRules;
}

/** The issue command, dated when the batch decides it. */
export function issueCommand(at: number, options: IssueOptions, plan: IssuePlan, scopes: ScopeInterner): Command {
  const scope = {
    tools: options.tools,
    args: plan.args,
    resources: options.resources ?? [],
    notBefore: options.notBefore ?? at,
    expiresAt: options.expiresAt,
    budget: options.budget,
    ...(options.callTimeoutMs !== undefined ? { callTimeoutMs: options.callTimeoutMs } : {}),
    ...(plan.approvals !== undefined ? { approvals: plan.approvals } : {}),
    ...(options.approvalTimeoutMs !== undefined ? { approvalTimeoutMs: options.approvalTimeoutMs } : {}),
  };
  // Snapshot the host's objects: later mutation by the caller cannot change an issued scope.
  const copied = safeJsonCopy(scope) as GrantScope | undefined;
  const shared = copied !== undefined ? scopes.share(copied) : (scope as unknown as GrantScope);
  return {
    type: 'issue',
    at,
    grantId: plan.grantId,
    tokenDigest: plan.tokenDigest,
    scope: shared,
    ...(plan.templates !== undefined ? { resourceTemplates: plan.templates } : {}),
    ...(options.fsBase !== undefined ? { fsBase: options.fsBase } : {}),
    ...(plan.principal !== undefined ? { principal: plan.principal } : {}),
  };
}

function safeJsonCopy(value: unknown): unknown {
  try {
    return JSON.parse(canonicalJson(value)) as unknown;
  } catch {
    return undefined;
  }
}

export function hostJson(value: unknown, what: string): JsonObject {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new TypeError(`${what} must be a JSON object`);
  const copy = safeJsonCopy(value);
  if (copy === undefined) throw new TypeError(`${what} must be plain JSON`);
  return copy as JsonObject;
}

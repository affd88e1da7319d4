import type { JsonObject } from '../domain/json';
import type { Policy } from '../integrations/mcp/policy';
import type { SchemaCompiler } from '../tools/schemas';
import { undeclaredNarrowedProperty } from '../tools/declaredProperties';
import type { PolicyProblem } from './checkPolicy';
import { pointer } from './pointer';

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Approval rules on tools the policy does not grant: they would ask about calls that are refused
 * anyway (`tool_not_granted`), so the author meant another tool. Read from the plain JSON value,
 * before (and whether or not) the policy parses, since `parsePolicy` refuses exactly this.
 */
export function approvalsNotGranted(value: unknown): PolicyProblem[] {
  if (!isObject(value) || !isObject(value.approvals)) return [];
  const tools = Array.isArray(value.tools) ? value.tools : [];
  return Object.keys(value.approvals).flatMap((tool) =>
    tools.includes(tool) ? [] : [{ pointer: pointer('approvals', tool), code: 'approval_not_granted' as const, message: `asks about ${JSON.stringify(tool)}, which the policy does not grant: its calls are refused tool_not_granted before anyone is asked` }],
  );
}

/** Approval schemas that do not compile, or that name a property the tool does not declare (the rule would match for a reason nobody meant). */
export function approvalRuleProblems(policy: Policy, schemas: ReadonlyMap<string, JsonObject> | undefined, compiler: SchemaCompiler): PolicyProblem[] {
  const problems: PolicyProblem[] = [];
  for (const [tool, rule] of Object.entries(policy.approvals ?? {})) {
    if (rule === true) continue;
    try {
      compiler.compileNarrowing(rule);
    } catch (error) {
      problems.push({ pointer: pointer('approvals', tool), code: 'approval_invalid', message: `does not compile: ${(error as Error).message}` });
      continue;
    }
    const inputSchema = schemas?.get(tool);
    const name = inputSchema === undefined ? undefined : undeclaredNarrowedProperty(inputSchema, rule);
    if (name !== undefined) problems.push({ pointer: pointer('approvals', tool), code: 'undeclared_property', message: `names property ${JSON.stringify(name)}, which the inputSchema of ${JSON.stringify(tool)} does not declare` });
  }
  return problems;
}

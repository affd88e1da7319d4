import type { GrantScope } from './events';
import type { JsonObject } from './json';
import type { GrantRecord } from './state';

// Approval rules of a grant scope and how a chain combines them. Pure: the schemas themselves are
// compiled and matched by the shell (ajv is host code); here only their shape and the chain's union.

const isTimeoutMs = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value > 0;

/** What is wrong with a scope's `approvals` / `approvalTimeoutMs`, or undefined. Names tools, never values. */
export function approvalRulesProblem(scope: GrantScope): string | undefined {
  if (scope.approvalTimeoutMs !== undefined && !isTimeoutMs(scope.approvalTimeoutMs)) return 'approvalTimeoutMs must be a positive safe integer (ms)';
  const rules: unknown = scope.approvals;
  if (rules === undefined) return undefined;
  if (rules === null || typeof rules !== 'object' || Array.isArray(rules)) return 'approvals must be an object of rules keyed by tool name';
  for (const [tool, rule] of Object.entries(rules as Record<string, unknown>)) {
    if (!scope.tools.includes(tool)) return `approvals names tool ${JSON.stringify(tool).slice(0, 80)}, which the grant does not include`;
    if (rule === true) continue;
    if (rule === null || typeof rule !== 'object' || Array.isArray(rule)) return `approvals[${JSON.stringify(tool).slice(0, 80)}] must be true or a JSON Schema object`;
  }
  return undefined;
}

/** The grant's own rule for a tool: `true`, a schema, or undefined. */
export function ownApprovalRule(grant: GrantRecord, tool: string): true | JsonObject | undefined {
  const rules = grant.scope.approvals;
  if (rules === undefined || !Object.prototype.hasOwnProperty.call(rules, tool)) return undefined;
  return rules[tool];
}

/** Whether any grant of the chain makes every call to `tool` wait (a rule the log alone re-derives). */
export function chainAlwaysAsks(grant: GrantRecord, ancestors: readonly GrantRecord[], tool: string): boolean {
  if (ownApprovalRule(grant, tool) === true) return true;
  for (const a of ancestors) if (ownApprovalRule(a, tool) === true) return true;
  return false;
}

/** The least `approvalTimeoutMs` along the chain, or undefined when none sets one (the ledger's default applies). */
export function chainApprovalTimeout(grant: GrantRecord, ancestors: readonly GrantRecord[]): number | undefined {
  let least = grant.scope.approvalTimeoutMs;
  for (const a of ancestors) {
    const t = a.scope.approvalTimeoutMs;
    if (t !== undefined && (least === undefined || t < least)) least = t;
  }
  return least;
}

/** The earliest `expiresAt` along the chain: no wait outlives the authority it would run under. */
export function chainExpiry(grant: GrantRecord, ancestors: readonly GrantRecord[]): number {
  let least = grant.scope.expiresAt;
  for (const a of ancestors) if (a.scope.expiresAt < least) least = a.scope.expiresAt;
  return least;
}

/** The least `callTimeoutMs` along the chain, or undefined (as decide.ts's chainTimeout). */
export function chainCallTimeout(grant: GrantRecord, ancestors: readonly GrantRecord[]): number | undefined {
  let least = grant.scope.callTimeoutMs;
  for (const a of ancestors) {
    const t = a.scope.callTimeoutMs;
    if (t !== undefined && (least === undefined || t < least)) least = t;
  }
  return least;
}

/** Who decided an approval: 1-256 printable characters (host text, shown in audits; never agent data). */
export function approverProblem(by: unknown): string | undefined {
  if (typeof by !== 'string' || by.length < 1 || by.length > 256 || /[\u0000-\u001f\u007f]/.test(by)) return 'by must name who decided: 1-256 characters without control characters';
  return undefined;
}

/** An approval's note (approve's note, deny's reason): at most 2,000 characters. */
export function approvalNoteProblem(note: unknown): string | undefined {
  if (note === undefined) return undefined;
  if (typeof note !== 'string' || note.length > 2_000) return 'the note (or reason) must be a string of at most 2,000 characters';
  return undefined;
}

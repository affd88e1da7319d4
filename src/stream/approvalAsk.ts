import { sha256Hex } from '../domain/chain';
import type { ApprovalAsk } from '../domain/commands';
import type { JsonObject } from '../domain/json';
import type { GrantRecord } from '../domain/state';
import type { ToolRegistry } from './toolRegistry';
import { newApprovalId } from './ids';

/** How long a call waits for approval when no grant of its chain sets `approvalTimeoutMs`: 15 minutes. */
export const approvalTimeoutMsDefault = 900_000;


/**
 * The digest an approval is bound to: SHA-256 over the approval id, the tool and the canonical
 * arguments. Salted by the (random) id, so the log, which shows the digest, is no oracle for
 * guessing low-entropy arguments; whoever holds the arguments and the id recomputes it.
 */
export function approvalArgsDigest(approvalId: string, tool: string, canonicalArgs: string): string {
  return sha256Hex(`atc.approval.v1\u0000${approvalId}\u0000${tool}\u0000${canonicalArgs}`);
}

/** Whether any grant of the chain (root first, then the grant) asks a person about this call. */
export function chainAsks(registry: ToolRegistry, ancestors: readonly GrantRecord[], grant: GrantRecord, tool: string, args: JsonObject): boolean {
  for (const record of ancestors) if (ruleAsks(registry, record, tool, args)) return true;
  return ruleAsks(registry, grant, tool, args);
}

function ruleAsks(registry: ToolRegistry, grant: GrantRecord, tool: string, args: JsonObject): boolean {
  const rule = registry.approvalRuleFor(grant, tool);
  if (rule === null) return false;
  return rule === true || rule(args);
}

/** The approval request an admit command carries for a call the chain asks about. */
export function approvalAsk(tool: string, canonicalArgs: string, defaultTimeoutMs: number): ApprovalAsk {
  const approvalId = newApprovalId();
  return { approvalId, argsDigest: approvalArgsDigest(approvalId, tool, canonicalArgs), defaultTimeoutMs };
}

/** The fan-out weight of an agent-made approval rule (see admitCommand's narrowing work bound), else 0. */
export function approvalFanOut(registry: ToolRegistry, grant: GrantRecord, tool: string): number {
  if (grant.parentGrantId === undefined) return 0;
  const rule = registry.approvalRuleFor(grant, tool);
  return rule === null || rule === true ? 0 : rule.fanOut;
}

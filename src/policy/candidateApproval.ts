import type { ApprovalAsk } from '../domain/commands';
import type { ApprovalRules } from '../domain/events';
import { canonicalJson } from '../domain/canonicalJson';
import { approvalTimeoutMsDefault } from '../stream/approvalAsk';
import type { GrantRecord } from '../domain/state';
import type { CallDecision } from './candidateChecks';

/**
 * Whether a logged call would wait for a person under the candidate: a `true` rule anywhere in the
 * chain (the candidate's on the root, the children's own) asks; schema rules equal to the logged
 * ones decide as the log did; other schema rules cannot be matched (argument values are never
 * logged) and are taken as not asking (`open`).
 */
export function candidateAsks(event: CallDecision, logged: ApprovalRules | undefined, candidate: ApprovalRules | undefined, children: readonly GrantRecord[]): { readonly asks: boolean; readonly open: boolean } {
  const tool = event.tool;
  const rule = (rules: ApprovalRules | undefined): true | object | undefined => (rules !== undefined && Object.prototype.hasOwnProperty.call(rules, tool) ? rules[tool] : undefined);
  const childRules = children.map((c) => rule(c.scope.approvals));
  if (rule(candidate) === true || childRules.includes(true)) return { asks: true, open: false };
  const schemas = rule(candidate) !== undefined || childRules.some((r) => r !== undefined);
  if (!schemas) return { asks: false, open: false };
  if (canonicalJson(rule(candidate) ?? null) === canonicalJson(rule(logged) ?? null)) return { asks: event.type === 'approval.requested', open: false };
  return { asks: false, open: true };
}

/** The approval request a re-decided call carries: the logged one, or (a call the log admitted) one named after the call. */
export function diffApprovalAsk(event: CallDecision): ApprovalAsk {
  if (event.type === 'approval.requested') return { approvalId: event.approvalId, argsDigest: event.argsDigest, defaultTimeoutMs: Math.max(1, event.deadline - event.at) };
  return { approvalId: `a_diff_${event.callId}`.slice(0, 128), argsDigest: '0'.repeat(64), defaultTimeoutMs: approvalTimeoutMsDefault };
}

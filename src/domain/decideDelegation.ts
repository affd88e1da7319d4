import type { AttenuateCommand, Narrowing, RevokeDelegationCommand } from './commands';
import { emit, none, refuse, type Decision } from './decision';
import type { AttenuationRejectReason, RevocationRejectReason } from './delegationReasons';
import type { GrantBudget, GrantScope, MeterAmounts, Reservation } from './events';
import { chainAuthority, isDescendant } from './grantChain';
import { grantScopeProblem } from './grantSpec';
import { limits } from './limits';
import { meterAmount, metersLeft, namesMeter, sortedMeters } from './meters';
import { scopeCovers } from './resources';
import { shardGet } from './shardedMap';
import type { GrantRecord, LedgerState } from './state';

function attenuationRejected(reason: AttenuationRejectReason, parentGrantId: string | undefined): Decision {
  return emit(parentGrantId === undefined ? { type: 'attenuation.rejected', reason } : { type: 'attenuation.rejected', reason, parentGrantId });
}

/**
 * What a grant has left to hand down: per amount, the least `limit − used` over the grant and its
 * ancestors (each ancestor's `used` already counts the whole subtree's reservations). A child's budget
 * is a cap, not a transfer: its calls are reserved on the parent too when they are made.
 */
export function budgetLeft(grant: GrantRecord, ancestors: readonly GrantRecord[]): Reservation {
  let calls = grant.scope.budget.calls - grant.used.calls;
  let inputBytes = grant.scope.budget.inputBytes - grant.used.inputBytes;
  for (const a of ancestors) {
    calls = Math.min(calls, a.scope.budget.calls - a.used.calls);
    inputBytes = Math.min(inputBytes, a.scope.budget.inputBytes - a.used.inputBytes);
  }
  // Meters: per meter some grant of the chain caps (a meter none caps is not limited by the chain).
  const meters = metersLeft(grant, ancestors);
  if (meters === undefined) return { calls: Math.max(0, calls), inputBytes: Math.max(0, inputBytes) };
  return { calls: Math.max(0, calls), inputBytes: Math.max(0, inputBytes), meters };
}

/** Whether `child` asks for anything `parent` does not have (tools, resources, window, budget). */
function widens(parent: GrantRecord, left: Reservation, child: GrantScope): boolean {
  for (const tool of child.tools) if (!parent.scope.tools.includes(tool)) return true;
  for (const resource of child.resources) if (!parent.scope.resources.some((scope) => scopeCovers(scope, resource))) return true;
  if (child.notBefore < parent.scope.notBefore || child.expiresAt > parent.scope.expiresAt) return true;
  // A parent without a timeout lets a child set any; with one, a child's may only be shorter.
  if (parent.scope.callTimeoutMs !== undefined && (child.callTimeoutMs === undefined || child.callTimeoutMs > parent.scope.callTimeoutMs)) return true;
  if (parent.scope.approvalTimeoutMs !== undefined && (child.approvalTimeoutMs === undefined || child.approvalTimeoutMs > parent.scope.approvalTimeoutMs)) return true;
  if (child.budget.calls > left.calls || child.budget.inputBytes > left.inputBytes) return true;
  const meters = child.budget.meters;
  if (meters !== undefined) for (const name of Object.keys(meters)) if (namesMeter(left.meters, name) && (meters[name] as number) > meterAmount(left.meters, name)) return true;
  return false;
}

/**
 * A child's budget: what it asks for, defaulting to what the chain has left. Its meters are the
 * chain's left per meter with the request's own on top (each checked against the left by `widens`;
 * a meter the chain does not cap is the child's own). Its rate window is only its own (ancestors'
 * windows always apply to its calls), so none unless it asks for one.
 */
function childBudget(requested: NonNullable<Narrowing['budget']> | undefined, left: Reservation): GrantBudget {
  const calls = requested?.calls ?? left.calls;
  const inputBytes = requested?.inputBytes ?? left.inputBytes;
  const meters: MeterAmounts | undefined = requested?.meters === undefined ? left.meters : sortedMeters({ ...(left.meters ?? {}), ...requested.meters });
  const rate = requested?.rate;
  if (meters === undefined && rate === undefined) return { calls, inputBytes };
  if (rate === undefined) return { calls, inputBytes, meters: meters as MeterAmounts };
  if (meters === undefined) return { calls, inputBytes, rate };
  return { calls, inputBytes, meters, rate };
}

/**
 * An agent carves a child grant out of its own. Precedence: the parent chain's authority (as for a
 * call), then a malformed request, then a request that widens (including one past
 * `delegationDepthMax`). Unset fields default to the parent's (the budget: what it has left now).
 * The child's own narrowing schemas are kept as given; a call must also pass every ancestor's.
 */
export function decideAttenuate(state: LedgerState, command: AttenuateCommand): Decision {
  const authority = chainAuthority(state, command.parentGrantId, command.at);
  if (!authority.ok) return attenuationRejected(authority.reason, authority.grant?.grantId);
  const parent = authority.grant;
  const request = command.request;
  if (request.kind === 'invalid') return attenuationRejected('attenuation_invalid', parent.grantId);
  if (request.kind === 'widens') return attenuationRejected('attenuation_widens', parent.grantId);
  if (shardGet(state.grants, command.grantId) !== undefined) return refuse('duplicate_grant', 'grant id already issued');
  if (shardGet(state.tokens, command.tokenDigest) !== undefined) return refuse('duplicate_grant', 'token digest already issued');
  const n = request.narrowing;
  const left = budgetLeft(parent, authority.ancestors);
  const callTimeoutMs = n.callTimeoutMs ?? parent.scope.callTimeoutMs;
  const approvalTimeoutMs = n.approvalTimeoutMs ?? parent.scope.approvalTimeoutMs;
  const scope: GrantScope = {
    tools: n.tools ?? parent.scope.tools,
    args: n.args ?? {},
    resources: n.resources ?? parent.scope.resources,
    notBefore: n.notBefore ?? parent.scope.notBefore,
    expiresAt: n.expiresAt ?? parent.scope.expiresAt,
    budget: childBudget(n.budget, left),
    ...(callTimeoutMs !== undefined ? { callTimeoutMs } : {}),
    // The child's own rules: its ancestors' apply to its calls anyway (a chain's rule is the union).
    ...(n.approvals !== undefined ? { approvals: n.approvals } : {}),
    ...(approvalTimeoutMs !== undefined ? { approvalTimeoutMs } : {}),
  };
  if (grantScopeProblem(state, scope) !== undefined) return attenuationRejected('attenuation_invalid', parent.grantId);
  if (authority.ancestors.length + 1 > limits.delegationDepthMax) return attenuationRejected('attenuation_widens', parent.grantId);
  const root = authority.ancestors[0] ?? parent;
  if ((root.descendants ?? 0) >= limits.delegatedGrantsPerRootMax) return attenuationRejected('attenuation_widens', parent.grantId);
  if (widens(parent, left, scope)) return attenuationRejected('attenuation_widens', parent.grantId);
  return emit({ type: 'grant.issued', grantId: command.grantId, tokenDigest: command.tokenDigest, scope, parentGrantId: parent.grantId, parentLeft: left });
}

function revocationRejected(reason: RevocationRejectReason, revokedBy: string | undefined, grantId: string | undefined): Decision {
  return emit({
    type: 'revocation.rejected',
    reason,
    ...(revokedBy !== undefined ? { revokedBy } : {}),
    ...(grantId !== undefined ? { grantId } : {}),
  });
}

/**
 * An agent revokes a grant strictly below its own (never its own, a sibling's or an ancestor's:
 * `not_a_descendant`, also for an id that names no grant). Its own chain must be able to act, as
 * for a call. A target already revoked appends nothing.
 */
export function decideRevokeDelegation(state: LedgerState, command: RevokeDelegationCommand): Decision {
  const target = command.grantId === undefined ? undefined : shardGet(state.grants, command.grantId);
  const authority = chainAuthority(state, command.byGrantId, command.at);
  if (!authority.ok) return revocationRejected(authority.reason, authority.grant?.grantId, target?.grantId);
  const by = authority.grant.grantId;
  if (target === undefined || !isDescendant(target, by)) return revocationRejected('not_a_descendant', by, target?.grantId);
  if (target.revoked) return none;
  return emit({ type: 'grant.revoked', grantId: target.grantId, abortInFlight: command.abortInFlight, revokedBy: by });
}

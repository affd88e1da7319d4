import { sha256Hex } from './chain';
import { canonicalJson } from './canonicalJson';
import type { PrincipalRef } from './events';
import { shardGet } from './shardedMap';
import type { GrantRecord, LedgerState } from './state';

/** The longest principal or policy name a principal grant may carry. */
export const principalNameCharsMax = 256;
/** Generations a lookup walks at most (each expiry or re-enable adds one). */
export const principalGenerationsMax = 1_000_000;

/**
 * A principal's root grant for a policy has a derived id, one per generation (0, 1, …): the first
 * session issues generation 0, an expiry or a host's re-enable issues the next. Two gateway
 * processes that issue the same generation at once derive the same id, so the decider keeps one
 * (`duplicate_grant`) and the other reuses it: one grant per principal and policy, at any moment.
 */
export function principalGrantId(name: string, policy: string, generation: number): string {
  return `p_${sha256Hex(canonicalJson([name, policy, generation])).slice(0, 32)}`;
}

/** Why a principal grant cannot be issued with this ref and id now, or undefined when it can. */
export function principalGrantProblem(state: LedgerState, ref: PrincipalRef, grantId: string, at: number): string | undefined {
  if (typeof ref !== 'object' || ref === null) return 'principal must be { name, policy, generation }';
  for (const field of ['name', 'policy'] as const) {
    const value = ref[field];
    if (typeof value !== 'string' || value.length === 0 || value.length > principalNameCharsMax) return `principal.${field} must be a string of 1 to ${principalNameCharsMax} characters`;
  }
  if (!Number.isSafeInteger(ref.generation) || ref.generation < 0 || ref.generation >= principalGenerationsMax) return 'principal.generation must be a non-negative integer';
  if (grantId !== principalGrantId(ref.name, ref.policy, ref.generation)) return "a principal grant's id is derived from its principal, policy and generation";
  if (ref.generation === 0) return undefined;
  const previous = shardGet(state.grants, principalGrantId(ref.name, ref.policy, ref.generation - 1));
  if (previous === undefined) return 'principal.generation skips a generation';
  if (!previous.revoked && at < previous.scope.expiresAt) return `the principal already has an active grant for this policy (${previous.grantId})`;
  return undefined;
}

/** The principal's latest grant for a policy and its generation, or undefined before its first. */
export function latestPrincipalGrant(state: LedgerState, name: string, policy: string): { readonly grant: GrantRecord; readonly generation: number } | undefined {
  let latest: { grant: GrantRecord; generation: number } | undefined;
  for (let generation = 0; generation < principalGenerationsMax; generation++) {
    const grant = shardGet(state.grants, principalGrantId(name, policy, generation));
    if (grant === undefined) return latest;
    latest = { grant, generation };
  }
  return latest;
}

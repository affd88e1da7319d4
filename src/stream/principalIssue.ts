import type { PrincipalRef } from '../domain/events';
import { latestPrincipalGrant } from '../domain/principals';
import type { LedgerState } from '../domain/state';

/** The `principal` option of `issue`, checked and copied (a host's later mutation changes nothing). */
export function hostPrincipal(value: unknown): { readonly name: string; readonly policy: string } | undefined {
  if (value === undefined) return undefined;
  const principal = value as { readonly name?: unknown; readonly policy?: unknown };
  if (typeof value !== 'object' || value === null || typeof principal.name !== 'string' || typeof principal.policy !== 'string') throw new TypeError('principal must be { name: string, policy: string }');
  return { name: principal.name, policy: principal.policy };
}

/** The generation a new grant for this principal and policy takes in this state (the decider re-checks it). */
export function nextPrincipalRef(state: LedgerState, principal: { readonly name: string; readonly policy: string }): PrincipalRef {
  const latest = latestPrincipalGrant(state, principal.name, principal.policy);
  return { name: principal.name, policy: principal.policy, generation: latest === undefined ? 0 : latest.generation + 1 };
}

import { shardGet } from './shardedMap';
import type { GrantRecord, LedgerState } from './state';

const noAncestors: readonly GrantRecord[] = Object.freeze([]);

/**
 * The records of a grant's ancestors, root first, looked up by the ids the grant keeps: as many
 * lookups as the chain is deep, no scan of the tree. Undefined when one is missing (only in a log
 * `verify` refuses).
 */
export function ancestorRecords(state: LedgerState, grant: GrantRecord): readonly GrantRecord[] | undefined {
  const ids = grant.ancestors;
  // `ancestors` is set only on a child, never empty (records.ts, grantRecord).
  if (ids === undefined) return noAncestors;
  const records: GrantRecord[] = [];
  for (const id of ids) {
    const ancestor = shardGet(state.grants, id);
    if (ancestor === undefined) return undefined;
    records.push(ancestor);
  }
  return records;
}

export type AuthorityReason = 'unknown_token' | 'revoked' | 'not_yet_valid' | 'expired';

export type ChainAuthority =
  | { readonly ok: true; readonly grant: GrantRecord; readonly ancestors: readonly GrantRecord[] }
  | { readonly ok: false; readonly reason: AuthorityReason; readonly grant?: GrantRecord };

/**
 * Whether a grant and every ancestor may act at `at`: known, none revoked, all inside their validity
 * windows. Reasons in precedence order across the whole chain (a revoked ancestor is `revoked` even
 * when the grant itself has also expired). A child's window lies inside its parent's (checked at
 * issue), so the window checks over the chain only matter for logs `verify` would refuse; they are cheap.
 */
export function chainAuthority(state: LedgerState, grantId: string | undefined, at: number): ChainAuthority {
  const grant = grantId === undefined ? undefined : shardGet(state.grants, grantId);
  if (grant === undefined) return { ok: false, reason: 'unknown_token' };
  let revoked = grant.revoked;
  let early = at < grant.scope.notBefore;
  let late = at >= grant.scope.expiresAt;
  const ids = grant.ancestors;
  let ancestors = noAncestors;
  if (ids !== undefined) {
    // One pass, one lookup per ancestor (this runs twice per call: in the shell and in decide).
    const records: GrantRecord[] = [];
    for (let i = 0; i < ids.length; i++) {
      const a = shardGet(state.grants, ids[i] as string);
      if (a === undefined) return { ok: false, reason: 'revoked', grant }; // fail closed
      records.push(a);
      if (a.revoked) revoked = true;
      if (at < a.scope.notBefore) early = true;
      if (at >= a.scope.expiresAt) late = true;
    }
    ancestors = records;
  }
  if (revoked) return { ok: false, reason: 'revoked', grant };
  if (early) return { ok: false, reason: 'not_yet_valid', grant };
  if (late) return { ok: false, reason: 'expired', grant };
  return { ok: true, grant, ancestors };
}

/** Whether `grant` lies strictly below the grant with id `ancestorId`. */
export function isDescendant(grant: GrantRecord, ancestorId: string): boolean {
  return grant.ancestors !== undefined && grant.ancestors.includes(ancestorId);
}

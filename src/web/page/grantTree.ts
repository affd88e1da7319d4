/** What the tree needs of a grant. `parentGrantId` comes from its `grant.issued` (delegation). */
export interface GrantNodeInput {
  readonly grantId: string;
  readonly parentGrantId: string | undefined;
  readonly issuedSeq: number;
  readonly revoked: boolean;
  readonly expiresAt: number;
}

export type GrantStatus = 'active' | 'revoked' | 'revoked_by_ancestor' | 'expired';

export interface GrantNode {
  readonly grantId: string;
  readonly status: GrantStatus;
  readonly depth: number;
  readonly children: readonly GrantNode[];
}

/** Nesting deeper than this is drawn flat (a hostile log could chain a grant very deep). */
export const treeDepthMax = 32;

/**
 * Builds the delegation forest: each grant under its parent (a parent missing from the log, or a
 * cycle, makes a root), children in issue order. A grant below a revoked one is revoked too.
 */
export function grantForest(grants: Iterable<GrantNodeInput>, now: number): GrantNode[] {
  const byId = new Map<string, GrantNodeInput>();
  for (const grant of grants) byId.set(grant.grantId, grant);
  const children = new Map<string, GrantNodeInput[]>();
  const roots: GrantNodeInput[] = [];
  for (const grant of byId.values()) {
    const parent = grant.parentGrantId;
    if (parent !== undefined && byId.has(parent) && !reachesItself(grant, byId)) {
      const list = children.get(parent) ?? [];
      list.push(grant);
      children.set(parent, list);
    } else roots.push(grant);
  }
  const build = (grant: GrantNodeInput, depth: number, ancestorRevoked: boolean): GrantNode => {
    const status: GrantStatus = grant.revoked ? 'revoked' : ancestorRevoked ? 'revoked_by_ancestor' : grant.expiresAt <= now ? 'expired' : 'active';
    const kids = depth >= treeDepthMax ? [] : (children.get(grant.grantId) ?? []).sort(byIssue).map((c) => build(c, depth + 1, status === 'revoked' || status === 'revoked_by_ancestor'));
    return { grantId: grant.grantId, status, depth, children: kids };
  };
  return roots.sort(byIssue).map((g) => build(g, 0, false));
}

/** Every grant id in a subtree (the grant and its descendants). */
export function subtreeIds(node: GrantNode): string[] {
  const ids: string[] = [];
  const walk = (n: GrantNode): void => {
    ids.push(n.grantId);
    n.children.forEach(walk);
  };
  walk(node);
  return ids;
}

function byIssue(a: GrantNodeInput, b: GrantNodeInput): number {
  return a.issuedSeq - b.issuedSeq;
}

function reachesItself(grant: GrantNodeInput, byId: ReadonlyMap<string, GrantNodeInput>): boolean {
  let at = grant.parentGrantId;
  for (let steps = 0; at !== undefined && steps <= byId.size; steps++) {
    if (at === grant.grantId) return true;
    at = byId.get(at)?.parentGrantId;
  }
  return false;
}

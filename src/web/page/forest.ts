import { grantTree, type GrantTreeNode } from '../../domain/grantTree';
import type { AuditModel } from './auditModel';

/** How the page labels a grant: the core's effective status, with a revocation inherited from an ancestor told apart. */
export type DisplayStatus = 'active' | 'revoked' | 'revoked_by_ancestor' | 'not_yet_valid' | 'expired';

export interface AuditForest {
  readonly roots: readonly GrantTreeNode[];
  /** Grants the tree cannot place (a parent missing from the log, or a chain the core cannot walk): only a log that fails `atc verify` has them. */
  readonly unplaced: readonly string[];
  readonly status: ReadonlyMap<string, DisplayStatus>;
}

/**
 * The delegation forest at time `at` from the core's own projection (`grantTree` over the folded
 * state: effective status by the chain, usage that already counts descendants), plus what a hostile
 * log could hide from it.
 */
export function auditForest(model: AuditModel, at: number): AuditForest {
  const issued = [...model.grants.values()].sort((a, b) => a.issuedSeq - b.issuedSeq).map((g) => g.grantId);
  let roots: readonly GrantTreeNode[] = [];
  try {
    roots = grantTree(model.state, issued, at);
  } catch {
    roots = [];
  }
  const status = new Map<string, DisplayStatus>();
  const walk = (node: GrantTreeNode): void => {
    const revokedItself = model.grants.get(node.grantId)?.revoked === true;
    status.set(node.grantId, node.status === 'revoked' && !revokedItself ? 'revoked_by_ancestor' : node.status);
    node.children.forEach(walk);
  };
  roots.forEach(walk);
  return { roots, unplaced: issued.filter((id) => !status.has(id)), status };
}

/** Every grant id in a subtree (the grant and its descendants). */
export function subtreeIds(node: GrantTreeNode): string[] {
  const ids: string[] = [];
  const walk = (n: GrantTreeNode): void => {
    ids.push(n.grantId);
    n.children.forEach(walk);
  };
  walk(node);
  return ids;
}

import { chainAuthority } from './grantChain';
import { meterAmount } from './meters';
import { admissionsInWindow } from './rateWindow';
import { shardGet } from './shardedMap';
import type { GrantRecord, LedgerState } from './state';

export type GrantStatus = 'active' | 'revoked' | 'not_yet_valid' | 'expired';

/** One grant of the delegation forest, as an audit shows it: status and usage (its subtree's) at a time. */
export interface GrantTreeNode {
  readonly grantId: string;
  readonly parentGrantId?: string;
  readonly depth: number;
  /** Effective status: `revoked` also when an ancestor is revoked. */
  readonly status: GrantStatus;
  readonly tools: readonly string[];
  readonly expiresAt: number;
  readonly usage: {
    readonly calls: { readonly limit: number; readonly used: number };
    readonly inputBytes: { readonly limit: number; readonly used: number };
    /** Only on a grant that caps meters. */
    readonly meters?: { readonly [meter: string]: { readonly limit: number; readonly used: number } };
    /** Only on a grant with a rate window: admissions in the window ending at the tree's time. */
    readonly rate?: { readonly limit: number; readonly windowMs: number; readonly inWindow: number };
  };
  readonly children: readonly GrantTreeNode[];
}

/**
 * The grants of `state` as a forest, roots and children in `issued` order (the grant ids in log
 * order). A read model for audits, not for admission: it visits every grant.
 */
export function grantTree(state: LedgerState, issued: readonly string[], at: number): readonly GrantTreeNode[] {
  const children = new Map<string, GrantRecord[]>();
  const roots: GrantRecord[] = [];
  for (const id of issued) {
    const grant = shardGet(state.grants, id);
    if (grant === undefined) continue;
    if (grant.parentGrantId === undefined) roots.push(grant);
    else {
      const siblings = children.get(grant.parentGrantId);
      if (siblings === undefined) children.set(grant.parentGrantId, [grant]);
      else siblings.push(grant);
    }
  }
  const node = (grant: GrantRecord): GrantTreeNode => {
    const id = grant.grantId;
    const authority = chainAuthority(state, id, at);
    const status: GrantStatus = authority.ok ? 'active' : authority.reason === 'unknown_token' ? 'revoked' : authority.reason;
    return {
      grantId: id,
      ...(grant.parentGrantId !== undefined ? { parentGrantId: grant.parentGrantId } : {}),
      depth: grant.ancestors?.length ?? 0,
      status,
      tools: grant.scope.tools,
      expiresAt: grant.scope.expiresAt,
      usage: {
        calls: { limit: grant.scope.budget.calls, used: grant.used.calls },
        inputBytes: { limit: grant.scope.budget.inputBytes, used: grant.used.inputBytes },
        ...(grant.scope.budget.meters !== undefined ? { meters: meterUsage(grant.scope.budget.meters, grant.metersUsed) } : {}),
        ...(grant.scope.budget.rate !== undefined
          ? { rate: { limit: grant.scope.budget.rate.calls, windowMs: grant.scope.budget.rate.windowMs, inWindow: admissionsInWindow(grant.admissions, grant.scope.budget.rate, at) } }
          : {}),
      },
      children: (children.get(id) ?? []).map(node),
    };
  };
  return roots.map(node);
}

function meterUsage(caps: { readonly [meter: string]: number }, used: { readonly [meter: string]: number } | undefined): { [meter: string]: { limit: number; used: number } } {
  const out: { [meter: string]: { limit: number; used: number } } = {};
  for (const name of Object.keys(caps)) out[name] = { limit: caps[name] as number, used: meterAmount(used, name) };
  return out;
}

/** The forest as indented text lines, one grant per line. */
export function grantTreeLines(forest: readonly GrantTreeNode[]): string[] {
  const lines: string[] = [];
  const walk = (nodes: readonly GrantTreeNode[], prefix: string): void => {
    nodes.forEach((n, i) => {
      const last = i === nodes.length - 1;
      const branch = n.depth === 0 ? '' : last ? '└─ ' : '├─ ';
      const { calls, inputBytes, meters, rate } = n.usage;
      const metered = meters === undefined ? '' : Object.entries(meters).map(([m, u]) => `  ${m} ${u.used}/${u.limit}`).join('');
      const rated = rate === undefined ? '' : `  rate ${rate.inWindow}/${rate.limit} per ${rate.windowMs} ms`;
      lines.push(`${prefix}${branch}${n.grantId}  ${n.status}  calls ${calls.used}/${calls.limit}  bytes ${inputBytes.used}/${inputBytes.limit}${metered}${rated}  tools ${n.tools.join(',')}`);
      walk(n.children, n.depth === 0 ? prefix : prefix + (last ? '   ' : '│  '));
    });
  };
  walk(forest, '');
  return lines;
}

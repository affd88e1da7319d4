import type { JsonObject } from './json';
import { shardGet } from './shardedMap';
import type { GrantRecord, LedgerState } from './state';

/** A tool a token may call now, with every narrowing schema a call must pass (root's first). */
export interface VisibleTool {
  readonly name: string;
  readonly inputSchema: JsonObject;
  readonly narrowing: readonly JsonObject[];
}

const nothing: readonly VisibleTool[] = Object.freeze([]);

/** The grant's chain, root first, ending with the grant itself (a flat grant: just itself). */
function grantChain(grant: GrantRecord): readonly GrantRecord[] {
  return [grant];
}

function usableAt(grant: GrantRecord, at: number): boolean {
  return !grant.revoked && at >= grant.scope.notBefore && at < grant.scope.expiresAt;
}

/**
 * What `ledger.visibleTools(token)` lists: the grant's tools that are registered, in the grant's
 * order, each with the narrowing schemas of its chain. Empty when the grant is unknown, or it or an
 * ancestor is revoked, not yet valid or expired at `at`. Budgets do not hide a tool (a spent budget
 * is a reason the call is refused, not a change of what the agent may ask for). Cost: the chain's
 * depth times the grant's tools; no scan of other grants.
 */
export function visibleTools(state: LedgerState, grantId: string | undefined, at: number): readonly VisibleTool[] {
  const grant = grantId === undefined ? undefined : shardGet(state.grants, grantId);
  if (grant === undefined) return nothing;
  const chain = grantChain(grant);
  if (!chain.every((link) => usableAt(link, at))) return nothing;
  const visible: VisibleTool[] = [];
  for (const name of grant.scope.tools) {
    if (!Object.prototype.hasOwnProperty.call(state.tools, name)) continue;
    const tool = state.tools[name];
    if (tool === undefined) continue;
    const narrowing: JsonObject[] = [];
    for (const link of chain) {
      if (Object.prototype.hasOwnProperty.call(link.scope.args, name)) {
        const schema = link.scope.args[name];
        if (schema !== undefined) narrowing.push(schema);
      }
    }
    visible.push(Object.freeze({ name, inputSchema: tool.inputSchema, narrowing: Object.freeze(narrowing) }));
  }
  return Object.freeze(visible);
}

import type { JsonObject } from './json';
import { chainAuthority } from './grantChain';
import type { LedgerState } from './state';

/** A tool a token may call now, with every narrowing schema a call must pass (root's first). */
export interface VisibleTool {
  readonly name: string;
  readonly inputSchema: JsonObject;
  readonly narrowing: readonly JsonObject[];
}

const nothing: readonly VisibleTool[] = Object.freeze([]);

/**
 * What `ledger.visibleTools(token)` lists: the grant's tools that are registered, in the grant's
 * order, each with the narrowing schemas of its chain. Empty when the grant is unknown, or it or an
 * ancestor is revoked, not yet valid or expired at `at`. Budgets do not hide a tool (a spent budget
 * is a reason the call is refused, not a change of what the agent may ask for). Cost: the chain's
 * depth times the grant's tools; no scan of other grants.
 */
export function visibleTools(state: LedgerState, grantId: string | undefined, at: number): readonly VisibleTool[] {
  const authority = chainAuthority(state, grantId, at);
  if (!authority.ok) return nothing;
  const grant = authority.grant;
  const chain = [...authority.ancestors, grant];
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

import type { JsonObject } from '../../src/domain/json';
import { shardWith } from '../../src/domain/shardedMap';
import { initialState, type GrantRecord, type LedgerState } from '../../src/domain/state';

/** A ledger state holding these grant records and tools (input schemas), for tests of read models and helpers. */
export function stateOf(grants: readonly GrantRecord[], tools: Readonly<Record<string, JsonObject>> = {}): LedgerState {
  let map = initialState.grants;
  for (const g of grants) map = shardWith(map, g.grantId, g);
  const toolRecords = Object.fromEntries(Object.entries(tools).map(([name, inputSchema]) => [name, { name, inputSchema }]));
  return { ...initialState, grants: map, tools: toolRecords };
}

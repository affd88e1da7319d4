import { nodeToolResources } from './resources/toolContext';
import { systemResolveHost } from './resources/url/resolveHost';
import { memoryStore } from './stores/memoryStore';
import { createLedgerWith, openLedgerWith, type LedgerWiring } from './stream/ledger';
import type { Ledger, LedgerOptions } from './stream/types';

/**
 * The public entry's wiring: the core (src/stream) owns the ports, this module plugs the concrete
 * rooms into them (the memory store by default, the checked file and fetch helpers, the system resolver).
 */
const wiring: LedgerWiring = { defaultStore: () => memoryStore(), resolveHost: systemResolveHost, resources: nodeToolResources };

/** Opens a ledger: rebuilds state from the store's log (refusing a log that does not verify). */
export function createLedger(options: LedgerOptions = {}): Ledger {
  return createLedgerWith(options, wiring);
}

/**
 * Opens a ledger on any store: resolves once the store is open and the state rebuilt. An
 * asynchronous store (PostgreSQL) is connected and migrated first; a synchronous one opens as in
 * `createLedger`. Rejects with LedgerError when the store cannot be opened or its log does not verify.
 */
export function openLedger(options: LedgerOptions = {}): Promise<Ledger> {
  return openLedgerWith(options, wiring);
}

import type { SqliteEventStore, SqliteStoreOptions } from './sqliteStoreOptions';

/**
 * A durable event store in one SQLite file, shareable by ledgers in several threads and processes:
 * each batch is decided and appended inside one BEGIN IMMEDIATE transaction (see docs/storage.md).
 *
 * The store's module (and with it the native `better-sqlite3`) is loaded on the first call, so
 * `import 'agent-tool-capabilities'` costs nothing for a ledger that never uses SQLite.
 */
export function sqliteStore(options: SqliteStoreOptions): SqliteEventStore {
  // A synchronous require, not import(): createLedger opens its store synchronously.
  const implementation = require('./sqliteStore') as typeof import('./sqliteStore');
  return implementation.sqliteStore(options);
}

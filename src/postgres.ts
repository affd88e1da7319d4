// The `agent-tool-capabilities/postgres` entry: the PostgreSQL store, kept out of the root entry so
// that `import 'agent-tool-capabilities'` never loads `pg`.
export { postgresStore, postgresDefaults, type PostgresStoreOptions, type PostgresEventStore } from './stores/postgres/postgresStore';

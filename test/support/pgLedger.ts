import { openLedger, type Ledger } from '../../src';
import { postgresStore, type PostgresEventStore, type PostgresStoreOptions } from '../../src/postgres';
import { url } from './pgTest';

export const hour = 3_600_000;
export const echoTool = {
  name: 'echo',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
  run: (args: { text?: string }) => args.text ?? null,
} as const;

/** A store on the test cluster; `schema` picks the ledger (fresh per test). */
export function pgStore(schema: string, options: Omit<PostgresStoreOptions, 'connectionString' | 'schema'> = {}): PostgresEventStore {
  return postgresStore({ connectionString: url(), schema, catchUpIntervalMs: 50, ...options });
}

export async function pgLedger(schema: string, options: Omit<PostgresStoreOptions, 'connectionString' | 'schema'> = {}): Promise<Ledger> {
  return openLedger({ store: pgStore(schema, options) });
}

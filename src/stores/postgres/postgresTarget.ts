import { LedgerError } from '../../errors';
import { schemaNamePattern } from './postgresSql';
import { postgresDefaults } from './postgresStore';

/** A `postgres://` (or `postgresql://`) URL naming a log; `?schema=` picks the ledger's schema. */
export function isPostgresUrl(text: string): boolean {
  return /^postgres(ql)?:\/\//i.test(text);
}

export interface PostgresTarget {
  readonly connectionString: string;
  readonly schema: string;
  /** The URL with any password masked, for printing. */
  readonly display: string;
}

export function parsePostgresTarget(text: string): PostgresTarget {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new LedgerError('store_failed', 'not a valid postgres:// URL');
  }
  const schema = url.searchParams.get('schema') ?? postgresDefaults.schema;
  if (!schemaNamePattern.test(schema)) throw new LedgerError('store_failed', `schema must match ${schemaNamePattern}`);
  url.searchParams.delete('schema');
  const connectionString = url.toString();
  if (url.password !== '') url.password = '***';
  return { connectionString, schema, display: url.toString() };
}

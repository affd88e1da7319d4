import path from 'node:path';
import { LedgerError } from '../../errors';
import { packageRoot, readMigrations, type Migration } from '../shared/migrationFiles';
import type { HeldClient } from './postgresPool';
import { quoteIdent } from './postgresSql';

export function defaultPostgresMigrationsDir(): string {
  return path.join(packageRoot(__dirname), 'migrations', 'postgres');
}

export function postgresMigrations(dir: string = defaultPostgresMigrationsDir()): readonly Migration[] {
  return readMigrations(dir);
}

interface AppliedRow {
  id: number;
  name: string;
  sha256: string;
}

/**
 * Brings the schema up to date. A schema already at the files' version is only read (so the ledger's
 * least-privileged role, which cannot create anything, opens it). Otherwise every missing migration
 * is applied (unless `readonly`), once, in one transaction holding `schema_migrations` in EXCLUSIVE
 * mode, so concurrent openers on many hosts apply each exactly once; recorded migrations that differ
 * from the files (edited after release) or are newer than them are refused. A table lock, not an
 * advisory one, which any role could hold to stop every upgrade: only the table's owner can take it,
 * and a role with no grant on the schema cannot even queue. (One with USAGE on it can still delay a
 * migration, not a host at the schema's version, by holding a weaker lock: docs/postgres.md, Locks.)
 */
export async function migratePostgres(client: HeldClient, schema: string, migrations: readonly Migration[], readonly = false): Promise<void> {
  const s = quoteIdent(schema);
  const before = await appliedRows(client, schema);
  const appliedBefore = before === undefined ? 0 : check(migrations, before);
  if (appliedBefore === migrations.length) return;
  if (readonly) {
    throw new LedgerError('store_failed', before === undefined ? `schema ${schema} holds no ledger` : `the ledger schema ${schema} is at migration ${appliedBefore}, this version needs ${migrations.length}: open it once read-write to migrate`);
  }
  try {
    if (before === undefined) await createMigrationsTable(client, s);
    await client.queries(`BEGIN; LOCK TABLE ${s}.schema_migrations IN EXCLUSIVE MODE; SET LOCAL search_path TO ${s}`);
    const applied = (await appliedRows(client, schema)) ?? [];
    for (const migration of migrations.slice(check(migrations, applied))) {
      await client.query(migration.sql);
      await client.query('INSERT INTO schema_migrations (id, name, sha256) VALUES ($1, $2, $3)', [migration.id, migration.name, migration.sha256]);
    }
    await client.query('COMMIT');
  } catch (error) {
    client.fail();
    throw error;
  }
}

/**
 * The schema and its migrations table, if missing, each in a statement of its own, before the lock
 * (which is on that table). A host creating one at the same moment as another waits for it, then collides on
 * the catalog's unique index (23505) or finds it made (42P06, 42P07): that is caught on the server,
 * since either way the object is there once the statement ends.
 */
async function createMigrationsTable(client: HeldClient, s: string): Promise<void> {
  const created = (statement: string): string => `DO $$ BEGIN ${statement}; EXCEPTION WHEN unique_violation OR duplicate_schema OR duplicate_table THEN NULL; END $$`;
  // One message; each statement sees what was committed before it started (READ COMMITTED).
  await client.queries(
    `${created(`CREATE SCHEMA IF NOT EXISTS ${s}`)}; ` +
      created(`CREATE TABLE IF NOT EXISTS ${s}.schema_migrations (id integer PRIMARY KEY, name text NOT NULL, sha256 text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`),
  );
}

async function appliedRows(client: HeldClient, schema: string): Promise<AppliedRow[] | undefined> {
  const exists = await client.query('SELECT to_regclass($1) IS NOT NULL AS present', [`${quoteIdent(schema)}.schema_migrations`]);
  if (exists.rows[0]?.present !== true) return undefined;
  const result = await client.query(`SELECT id, name, sha256 FROM ${quoteIdent(schema)}.schema_migrations ORDER BY id`);
  return result.rows as AppliedRow[];
}

/** Checks the recorded migrations against the files; returns how many are applied. */
function check(migrations: readonly Migration[], applied: readonly AppliedRow[]): number {
  applied.forEach((row, i) => {
    const file = migrations[i];
    if (row.id !== i + 1) throw new LedgerError('store_failed', `schema_migrations is not contiguous at id ${row.id}`);
    if (file === undefined) throw new LedgerError('store_failed', `the database has migration ${row.id} (${row.name}), which this version does not know: upgrade agent-tool-capabilities`);
    if (file.name !== row.name || file.sha256 !== row.sha256) {
      throw new LedgerError('store_failed', `migration ${row.id} (${row.name}) was applied from a different file than migrations/postgres/${String(file.id).padStart(4, '0')}_${file.name}.sql (sha256 differs): released migrations must never be edited`);
    }
  });
  return applied.length;
}

import path from 'node:path';
import type Database from 'better-sqlite3';
import { LedgerError } from '../../errors';
import { packageRoot, type Migration } from '../shared/migrationFiles';

export function defaultMigrationsDir(): string {
  return path.join(packageRoot(), 'migrations');
}

interface AppliedRow {
  id: number;
  name: string;
  sha256: string;
}

/**
 * Brings the schema up to date: applies each migration not yet recorded, once, inside one
 * BEGIN IMMEDIATE transaction (so concurrent openers cannot apply one twice), and refuses a database
 * whose recorded migrations differ from the files (edited after release) or that is newer than them.
 * A read-only connection applies nothing and requires an up-to-date schema.
 */
export function migrate(db: Database.Database, migrations: readonly Migration[], readonly: boolean): void {
  if (readonly) {
    checkApplied(migrations, appliedRows(db), true);
    return;
  }
  db.exec('BEGIN IMMEDIATE');
  try {
    db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      id INTEGER PRIMARY KEY, name TEXT NOT NULL, sha256 TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT`);
    const applied = appliedRows(db);
    checkApplied(migrations, applied, false);
    const record = db.prepare('INSERT INTO schema_migrations (id, name, sha256, applied_at) VALUES (?, ?, ?, ?)');
    for (const migration of migrations.slice(applied.length)) {
      db.exec(migration.sql);
      record.run(migration.id, migration.name, migration.sha256, new Date().toISOString());
    }
    db.exec('COMMIT');
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw error;
  }
}

function appliedRows(db: Database.Database): AppliedRow[] {
  const table = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'").get();
  if (table === undefined) return [];
  return db.prepare('SELECT id, name, sha256 FROM schema_migrations ORDER BY id').all() as AppliedRow[];
}

function checkApplied(migrations: readonly Migration[], applied: readonly AppliedRow[], requireAll: boolean): void {
  applied.forEach((row, i) => {
    const file = migrations[i];
    if (row.id !== i + 1) throw new LedgerError('store_failed', `schema_migrations is not contiguous at id ${row.id}`);
    if (file === undefined) throw new LedgerError('store_failed', `the database has migration ${row.id} (${row.name}), which this version does not know: upgrade agent-tool-capabilities`);
    if (file.name !== row.name || file.sha256 !== row.sha256) {
      throw new LedgerError('store_failed', `migration ${row.id} (${row.name}) was applied from a different file than migrations/${String(file.id).padStart(4, '0')}_${file.name}.sql (sha256 differs): released migrations must never be edited`);
    }
  });
  if (requireAll && applied.length < migrations.length) {
    throw new LedgerError('store_failed', `the database schema is at migration ${applied.length}, this version needs ${migrations.length}: open it once read-write to migrate`);
  }
}

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { sha256Hex } from '../../domain/chain';
import { LedgerError } from '../../errors';

export interface Migration {
  readonly id: number;
  readonly name: string;
  readonly sql: string;
  readonly sha256: string;
}

const packageName = 'agent-tool-capabilities';
const fileNamePattern = /^(\d{4})_([a-z0-9_]+)\.sql$/;

/**
 * The package root: the nearest directory above this module whose package.json is ours. Works from
 * src/stores/sqlite (ts-jest) and dist/src/stores/sqlite (built) alike; package.json "files" ships migrations/.
 */
export function packageRoot(from: string = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest)) {
      const name = (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name;
      if (name === packageName) return dir;
    }
    if (path.dirname(dir) === dir) throw new LedgerError('store_failed', `cannot find the ${packageName} package root above ${from}`);
  }
}

export function defaultMigrationsDir(): string {
  return path.join(packageRoot(), 'migrations');
}

const cache = new Map<string, readonly Migration[]>();

/** The numbered migrations in `dir`: 0001_name.sql, 0002_…, contiguous from 1. Hashed with LF line ends. */
export function readMigrations(dir: string): readonly Migration[] {
  const cached = cache.get(dir);
  if (cached !== undefined) return cached;
  const migrations = readdirSync(dir)
    .map((file) => ({ file, match: fileNamePattern.exec(file) }))
    .filter((f): f is { file: string; match: RegExpExecArray } => f.match !== null)
    .map(({ file, match }) => {
      const sql = readFileSync(path.join(dir, file), 'utf8').replace(/\r\n/g, '\n');
      return { id: Number(match[1]), name: match[2] as string, sql, sha256: sha256Hex(sql) };
    })
    .sort((a, b) => a.id - b.id);
  migrations.forEach((m, i) => {
    if (m.id !== i + 1) throw new LedgerError('store_failed', `migrations in ${dir} must be numbered 0001, 0002, … without gaps (found ${String(m.id).padStart(4, '0')})`);
  });
  if (migrations.length === 0) throw new LedgerError('store_failed', `no migrations found in ${dir}`);
  cache.set(dir, migrations);
  return migrations;
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

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { sha256Hex } from '../../domain/chain';
import { LedgerError } from '../../errors';

/** Numbered SQL migration files, as every store reads them (each store applies them its own way). */
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
 * src/stores/shared (ts-jest) and dist/src/stores/shared (built) alike; package.json "files" ships migrations/.
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

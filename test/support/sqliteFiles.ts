import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';

/** A fresh directory per test file for SQLite logs; `cleanup` removes it. */
export function sqliteTempDir(): { readonly dir: string; file(name: string): string; cleanup(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'atc-sqlite-'));
  return { dir, file: (name) => path.join(dir, name), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Runs raw SQL on a log file the way an attacker with file access would (triggers dropped first if asked). */
export function tamper(file: string, sql: string, options: { dropTriggers?: boolean } = {}): void {
  const db = new Database(file);
  try {
    if (options.dropTriggers === true) db.exec('DROP TRIGGER events_refuse_update; DROP TRIGGER events_refuse_delete;');
    db.exec(sql);
  } finally {
    db.close();
  }
}

/** Collects what a CLI function printed. */
export function captureIo(): { out: (line: string) => void; err: (line: string) => void; readonly stdout: string[]; readonly stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { out: (line) => void stdout.push(line), err: (line) => void stderr.push(line), stdout, stderr };
}

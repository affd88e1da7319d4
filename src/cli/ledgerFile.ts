import fs from 'node:fs';
import path from 'node:path';
import { createLedger, openLedger } from '../stream/ledger';
import type { Ledger, LedgerOptions } from '../stream/types';
import { sqliteStore } from '../stores/sqlite/sqliteStore';

export type LedgerAtOptions = { readonly create: boolean } & Pick<LedgerOptions, 'onToolError'>;

/** Opens the SQLite file a `--ledger` option names (created if absent when `create`). */
export function openLedgerFile(file: string, options: LedgerAtOptions): Ledger {
  if (!options.create && !fs.existsSync(file)) throw new Error(`no ledger file at ${file}`);
  return createLedger({ store: sqliteStore({ path: file }), ...(options.onToolError !== undefined ? { onToolError: options.onToolError } : {}) });
}

/**
 * Opens the ledger a `--ledger` option names: a SQLite file, or a PostgreSQL log
 * (`postgres://…[?schema=atc]`, its schema migrated if new; `pg` is loaded only then). A server
 * that does not answer fails the open within the store's timeout (10 s).
 */
export async function openLedgerAt(target: string, options: LedgerAtOptions): Promise<Ledger> {
  if (!/^postgres(ql)?:\/\//i.test(target)) return openLedgerFile(target, options);
  const { parsePostgresTarget } = await import('../stores/postgres/postgresMirror');
  const { postgresStore } = await import('../stores/postgres/postgresStore');
  const { connectionString, schema } = parsePostgresTarget(target);
  return openLedger({ store: postgresStore({ connectionString, schema }), ...(options.onToolError !== undefined ? { onToolError: options.onToolError } : {}) });
}

/** The package's version (for MCP `serverInfo` / `clientInfo`), found by walking up to package.json. */
export function packageVersion(): string {
  let dir = __dirname;
  for (let i = 0; i < 6; i++) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'agent-tool-capabilities' && typeof pkg.version === 'string') return pkg.version;
    }
    dir = path.dirname(dir);
  }
  return '0.0.0';
}

/** Splits `args` at the first `--`: options before it, an upstream command line after it. */
export function splitCommand(args: readonly string[]): { readonly options: readonly string[]; readonly command: readonly string[] | undefined } {
  const at = args.indexOf('--');
  return at < 0 ? { options: args, command: undefined } : { options: args.slice(0, at), command: args.slice(at + 1) };
}

import fs from 'node:fs';
import path from 'node:path';
import { createLedger } from '../stream/ledger';
import type { Ledger, LedgerOptions } from '../stream/types';
import { sqliteStore } from '../stores/sqlite/sqliteStore';

/**
 * Opens the ledger a `--ledger` option names: a SQLite file (created if absent when `create`).
 * PostgreSQL URLs are not accepted here yet (they come with `openLedger`, issue 10).
 */
export function openLedgerFile(file: string, options: { readonly create: boolean } & Pick<LedgerOptions, 'onToolError'>): Ledger {
  if (/^postgres(ql)?:\/\//.test(file)) throw new Error('--ledger takes a SQLite file here; PostgreSQL URLs are not supported by this command yet');
  if (!options.create && !fs.existsSync(file)) throw new Error(`no ledger file at ${file}`);
  return createLedger({ store: sqliteStore({ path: file }), ...(options.onToolError !== undefined ? { onToolError: options.onToolError } : {}) });
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

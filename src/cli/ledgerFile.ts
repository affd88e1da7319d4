import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLedger, openLedger } from '../createLedger';
import type { Ledger, LedgerOptions } from '../stream/types';
import { sqliteStore } from '../stores/sqlite/sqliteStore';

export type LedgerAtOptions = {
  readonly create: boolean;
  /** A server with concurrent callers (proxy, gateway): SQLite group commit (docs/storage.md). */
  readonly groupCommit?: boolean;
} & Pick<LedgerOptions, 'onToolError'>;

/** Opens the SQLite file a `--ledger` option names (created if absent when `create`). */
export function openLedgerFile(file: string, options: LedgerAtOptions): Ledger {
  if (!options.create && !fs.existsSync(file)) throw new Error(`no ledger file at ${file}`);
  return createLedger({ store: sqliteStore({ path: file, ...(options.groupCommit === true ? { groupCommit: true } : {}) }), ...(options.onToolError !== undefined ? { onToolError: options.onToolError } : {}) });
}

/**
 * Where the CLI's PostgreSQL ledgers journal settlements the server could not take (a SQLite
 * ledger's journal sits beside its file): this host's state directory, so that a proxy killed or
 * closed while the server was down has its calls settled by the next `atc` command on that log.
 */
export function cliSettlementsDir(env: NodeJS.ProcessEnv = process.env): string {
  const state = env.XDG_STATE_HOME !== undefined && path.isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : path.join(os.homedir(), '.local', 'state');
  return path.join(state, 'agent-tool-capabilities', 'settlements');
}

/**
 * Opens the ledger a `--ledger` option names: a SQLite file, or a PostgreSQL log
 * (`postgres://…[?schema=atc]`, its schema migrated if new; `pg` is loaded only then) with its
 * settlement journal in `cliSettlementsDir()`. A server that does not answer fails the open within
 * the store's timeout (10 s).
 */
export async function openLedgerAt(target: string, options: LedgerAtOptions): Promise<Ledger> {
  if (!/^postgres(ql)?:\/\//i.test(target)) return openLedgerFile(target, options);
  const { parsePostgresTarget } = await import('../stores/postgres/postgresTarget');
  const { postgresStore } = await import('../stores/postgres/postgresStore');
  const { connectionString, schema } = parsePostgresTarget(target);
  return openLedger({ store: postgresStore({ connectionString, schema, settlementsDir: cliSettlementsDir() }), ...(options.onToolError !== undefined ? { onToolError: options.onToolError } : {}) });
}

/**
 * What `atc issue | revoke | grants` do with their `--ledger`: open it, `use` it, close it. Exit 2
 * when it cannot be opened, 1 when `use` throws (its message, after `atc <command>: `), else `use`'s.
 */
export async function withLedgerAt(command: string, target: string, options: LedgerAtOptions, err: (line: string) => void, use: (ledger: Ledger) => Promise<number>): Promise<number> {
  let ledger: Ledger;
  try {
    ledger = await openLedgerAt(target, options);
  } catch (error) {
    err(`atc ${command}: ${(error as Error).message}`);
    return 2;
  }
  try {
    return await use(ledger);
  } catch (error) {
    err(`atc ${command}: ${(error as Error).message}`);
    return 1;
  } finally {
    await ledger.close();
  }
}

export { packageVersion } from './packageVersion';

import { LedgerError } from '../../errors';

/**
 * SQLSTATE classes and codes after which a transaction may simply be tried again: serialization
 * failures and deadlocks (class 40), lock and statement timeouts, the server shutting down or
 * starting, too many connections, and every connection exception (class 08).
 */
const retryableCodes = new Set(['40001', '40P01', '55P03', '57014', '57P01', '57P02', '57P03', '53300', '53400', '25P03']);

/** Node socket errors that mean the connection is gone (or never came). */
const socketCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED']);

export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** Whether trying the whole transaction again may succeed. */
export function isRetryable(error: unknown): boolean {
  if (error instanceof StoreTimeout || error instanceof ConnectionLost) return true;
  const state = sqlState(error);
  if (state !== undefined) return retryableCodes.has(state) || state.startsWith('08');
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && socketCodes.has(code)) return true;
  // node-postgres reports a dropped or refused connection with these messages and no code.
  const message = error instanceof Error ? error.message : '';
  return /Connection terminated|connection timeout|Client has encountered a connection error|Client was closed|timeout exceeded when trying to connect/i.test(message);
}

/** A round trip to the server that did not answer in time (the client is then destroyed). */
export class StoreTimeout extends Error {
  override readonly name = 'StoreTimeout';
}

/** The client emitted 'error' (its backend died) while this store held it. */
export class ConnectionLost extends Error {
  override readonly name = 'ConnectionLost';
}

/** What a caller of the store sees: unavailable (retry later), or a failure that is not transient. */
export function postgresFailure(error: unknown, what: string): LedgerError {
  if (error instanceof LedgerError) return error;
  const detail = sqlState(error) ?? (error as { code?: unknown } | null)?.code ?? (error instanceof Error ? error.name : 'error');
  if (isRetryable(error)) return new LedgerError('ledger_unavailable', `the PostgreSQL log is unavailable: ${what} (${String(detail)})`, { cause: error });
  return new LedgerError('store_failed', `the PostgreSQL log could not ${what} (${String(detail)})`, { cause: error });
}

/** Operational failures (store I/O, closed ledger, a stored log that does not verify). */
export type LedgerErrorCode = 'ledger_unavailable' | 'closed' | 'invalid_log' | 'store_failed';

export class LedgerError extends Error {
  override readonly name = 'LedgerError';
  constructor(
    readonly code: LedgerErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

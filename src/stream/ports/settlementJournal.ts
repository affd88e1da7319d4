import type { MeterAmounts } from '../../domain/events';

/** A settlement the store could not take yet: only ids and the outcome, never a value. */
export interface PendingSettlement {
  readonly callId: string;
  readonly outcome: 'completed' | 'failed';
  readonly refund: boolean;
  /** The caller cancelled the call (logged as `cancelled: true` on its `call.failed`). */
  readonly cancelled?: boolean;
  /** The tool's `ctx.report` (meter names and amounts, never a value of the call). */
  readonly report?: MeterAmounts;
}

/**
 * Where a ledger keeps the settlements its store refused, outside the log, so that the next open
 * (after `close`, or after a crash when the journal is on disk) appends them. Each ledger object is
 * one `owner` and replaces its whole list on every change. Taking over another owner's entries is
 * safe: a settlement lands once, a second attempt is refused (`unknown_call`) and dropped.
 */
export interface SettlementJournal {
  /** Replaces what `owner` keeps; an empty list forgets the owner. May throw (then the ledger keeps retrying in memory). */
  keep(owner: string, pending: readonly PendingSettlement[]): void;
  /** What every owner keeps now. Never throws: an unreadable entry is skipped. */
  kept(): readonly { readonly owner: string; readonly pending: readonly PendingSettlement[] }[];
}

/** A store that brings its own journal (the SQLite store: files next to the database). */
export interface JournaledStore {
  readonly settlements: SettlementJournal;
}

export function storeJournal(store: object): SettlementJournal | undefined {
  const journal = (store as Partial<JournaledStore>).settlements;
  return journal !== undefined && typeof journal.keep === 'function' && typeof journal.kept === 'function' ? journal : undefined;
}

/** A journal in this process's memory: survives `close` and a reopen on the same store object, not a crash. */
export function memoryJournal(): SettlementJournal {
  const owners = new Map<string, readonly PendingSettlement[]>();
  return {
    keep(owner, pending) {
      if (pending.length === 0) owners.delete(owner);
      else owners.set(owner, Object.freeze([...pending]));
    },
    kept: () => Array.from(owners, ([owner, pending]) => ({ owner, pending })),
  };
}

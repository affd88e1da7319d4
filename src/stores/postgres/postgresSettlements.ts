import * as nodePath from 'node:path';
import type { LedgerEvent } from '../../domain/events';
import { LedgerError } from '../../errors';
import { fileJournal } from '../fileJournal';
import type { PendingSettlement, SettlementJournal } from '../../stream/ports/settlementJournal';

/**
 * The settlement journal of a PostgreSQL log, on this host's disk. It is needed exactly when the
 * server cannot take a settlement, so it cannot live in the server. Its directory is named after
 * the log (`<schema>-<first 16 hex digits of event 1's hash>` under `settlementsDir`): a ledger takes
 * over and settles every entry of its journal whose call is still in flight and drops the others, so
 * entries of another log must never be in it. The log is known once its first event is.
 */
export class PostgresSettlementJournal implements SettlementJournal {
  private journal: SettlementJournal | undefined;

  constructor(
    private readonly dir: string,
    private readonly schema: string,
  ) {}

  /** Notes the log's first event when `events` (committed, in order) holds it. */
  seen(events: readonly LedgerEvent[]): void {
    const first = events[0];
    if (this.journal !== undefined || first === undefined || first.seq !== 1) return;
    this.journal = fileJournal(nodePath.join(this.dir, `${this.schema}-${first.hash.slice(0, 16)}`));
  }

  keep(owner: string, pending: readonly PendingSettlement[]): void {
    if (this.journal !== undefined) return this.journal.keep(owner, pending);
    // An empty log has no call in flight, so there is nothing to keep before its first event.
    if (pending.length > 0) throw new LedgerError('store_failed', 'the settlement journal does not know the log yet');
  }

  kept(): readonly { readonly owner: string; readonly pending: readonly PendingSettlement[] }[] {
    return this.journal?.kept() ?? [];
  }
}

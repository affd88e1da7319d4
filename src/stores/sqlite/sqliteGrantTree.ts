import type Database from 'better-sqlite3';
import type { LedgerEvent } from '../../domain/events';
import { initialState, type LedgerState } from '../../domain/state';
import { TransientState } from '../../domain/transientState';
import { eventOfBody } from '../shared/eventRows';

/**
 * The state of a stored log (a fold of its events, read in seq order) and its grant ids in issue
 * order, for `atc audit --tree`. Reads; does not verify (that is `atc verify`).
 */
export function foldGrants(db: Database.Database): { readonly state: LedgerState; readonly issued: readonly string[] } {
  const fold = new TransientState(initialState);
  const issued: string[] = [];
  const rows = db.prepare('SELECT body FROM events ORDER BY seq').pluck().iterate() as IterableIterator<string>;
  for (const body of rows) {
    const event: LedgerEvent = eventOfBody(body);
    if (event.type === 'grant.issued') issued.push(event.grantId);
    fold.apply(event);
  }
  return { state: fold.commit(), issued };
}

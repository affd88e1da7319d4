import type Database from 'better-sqlite3';
import { sha256Hex } from '../../domain/chain';
import { keyContainersCurrent } from '../../domain/idempotency';
import type { LedgerState } from '../../domain/state';
import { freezeJson } from '../../domain/freezeJson';
import { snapshotsKeptMax } from '../shared/snapshotPolicy';

interface SnapshotRow {
  seq: number;
  head_hash: string;
  state: string;
  state_hash: string;
}

/**
 * The newest snapshot that is bound to the stored log: its head hash equals the stored event's hash
 * at its seq, its text hashes to its state hash, and the state's own head agrees. Snapshots that fail
 * any of these are skipped (they are a cache; the events are the truth).
 */
export function readLatestSnapshot(db: Database.Database): LedgerState | undefined {
  const candidates = db
    .prepare('SELECT s.seq, s.head_hash, s.state, s.state_hash FROM snapshots s JOIN events e ON e.seq = s.seq AND e.hash = s.head_hash ORDER BY s.seq DESC')
    .all() as SnapshotRow[];
  for (const row of candidates) {
    if (sha256Hex(row.state) !== row.state_hash) continue;
    let state: LedgerState;
    try {
      state = JSON.parse(row.state) as LedgerState;
    } catch {
      continue;
    }
    if (!isStateShaped(state) || state.head.seq !== row.seq || state.head.hash !== row.head_hash) continue;
    return freezeJson(state);
  }
  return undefined;
}

/** The follower text kept beside the snapshot at `seq` (docs/transparency.md), if any. */
export function readSnapshotFollowerText(db: Database.Database, seq: number): string | undefined {
  const text = db.prepare('SELECT follower FROM snapshots WHERE seq = ?').pluck().get(seq) as string | null | undefined;
  return typeof text === 'string' ? text : undefined;
}

/** The containers a state has (a snapshot of another shape is skipped, not folded). */
function isStateShaped(value: unknown): value is LedgerState {
  if (value === null || typeof value !== 'object') return false;
  const s = value as Partial<Record<keyof LedgerState, unknown>>;
  const head = s.head as { seq?: unknown; hash?: unknown } | null | undefined;
  return (
    head !== null && typeof head === 'object' && typeof head.seq === 'number' && typeof head.hash === 'string' &&
    s.tools !== null && typeof s.tools === 'object' && !Array.isArray(s.tools) &&
    Array.isArray(s.grants) && Array.isArray(s.tokens) && Array.isArray(s.inFlight) &&
    // Snapshots written before idempotency keys existed, or before their containers took this shape
    // (`idempotencyBindings`, each tree's queue on its root's record, its entries the bindings), lack
    // these: skipped, the events are folded instead.
    Array.isArray(s.idempotencyBindings) && keyContainersCurrent(value as LedgerState)
  );
}

/** Seq and size of the newest stored snapshot (zeros when there is none). */
export function latestSnapshotInfo(db: Database.Database): { readonly seq: number; readonly bytes: number } {
  const row = db.prepare('SELECT seq, length(state) AS bytes FROM snapshots ORDER BY seq DESC LIMIT 1').get() as { seq: number; bytes: number } | undefined;
  return row ?? { seq: 0, bytes: 0 };
}


/**
 * Writes the state at its head as a snapshot, in its own short transaction, only if the stored event
 * at that seq has the state's head hash. `begin` opens that transaction (the store's bounded, fair
 * BEGIN IMMEDIATE); it throws when the lock could not be had.
 */
export function writeSnapshot(db: Database.Database, state: LedgerState, begin: () => void, followerText?: () => string): { readonly written: boolean; readonly bytes: number } {
  const text = JSON.stringify(state);
  const follower = followerText?.() ?? null;
  begin();
  try {
    const inserted = db
      .prepare(
        `INSERT OR IGNORE INTO snapshots (seq, head_hash, state, state_hash, created_at, follower)
         SELECT ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM events WHERE seq = ? AND hash = ?)`,
      )
      .run(state.head.seq, state.head.hash, text, sha256Hex(text), new Date().toISOString(), follower, state.head.seq, state.head.hash);
    db.prepare('DELETE FROM snapshots WHERE seq NOT IN (SELECT seq FROM snapshots ORDER BY seq DESC LIMIT ?)').run(snapshotsKeptMax);
    db.exec('COMMIT');
    return { written: inserted.changes === 1, bytes: text.length };
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw error;
  }
}

import { sha256Hex } from '../../domain/chain';
import { keyContainersCurrent } from '../../domain/idempotency';
import type { LedgerState } from '../../domain/state';
import { snapshotGap, snapshotsKeptMax } from '../shared/snapshotPolicy';
import { freezeJson } from '../../domain/freezeJson';
import type { PostgresTables } from './postgresLocking';
import type { HeldClient, PostgresPool } from './postgresPool';

/**
 * Takes the log's snapshot lock if no other transaction holds it: the one row of `snapshot_lock`,
 * locked FOR UPDATE SKIP LOCKED (no row back: another host holds it). Needs SELECT and UPDATE on
 * that table, so a role the owner granted nothing cannot hold it to stop snapshots, as it could the
 * advisory lock this replaces. A missing row reads as held: no snapshot, which only costs speed.
 */
export function trySnapshotLockStatement(tables: PostgresTables): string {
  return `SELECT true AS locked FROM ${tables.snapshotLock} FOR UPDATE SKIP LOCKED`;
}

interface SnapshotRow {
  seq: string;
  head_hash: string;
  state: string;
  state_hash: string;
}

/**
 * The newest snapshot bound to the stored log (its head hash is the stored event's hash at its seq,
 * its text hashes to its state hash, the state's own head agrees); others are skipped, as on SQLite.
 */
export async function readLatestSnapshot(client: HeldClient, tables: PostgresTables): Promise<LedgerState | undefined> {
  const result = await client.query(
    `SELECT s.seq, s.head_hash, s.state, s.state_hash FROM ${tables.snapshots} s JOIN ${tables.events} e ON e.seq = s.seq AND e.hash = s.head_hash ORDER BY s.seq DESC`,
  );
  for (const row of result.rows as SnapshotRow[]) {
    if (sha256Hex(row.state) !== row.state_hash) continue;
    let state: LedgerState;
    try {
      state = JSON.parse(row.state) as LedgerState;
    } catch {
      continue;
    }
    if (state?.head?.seq !== Number(row.seq) || state.head.hash !== row.head_hash) continue;
    // A snapshot written before idempotency keys existed, or before their containers took this shape
    // (`idempotencyBindings`, each tree's queue on its root's record, its entries the bindings), lacks
    // them: skipped, the events are folded instead.
    if (!Array.isArray(state.idempotencyBindings) || !keyContainersCurrent(state)) continue;
    return freezeJson(state);
  }
  return undefined;
}

/** The newest stored snapshot's seq and size (0 and 0 when there is none). */
async function newestSnapshot(client: HeldClient, tables: PostgresTables): Promise<{ seq: number; bytes: number }> {
  // octet_length reads a stored text's size from its header, without detoasting a big state.
  const result = await client.query(`SELECT seq, octet_length(state) AS bytes FROM ${tables.snapshots} ORDER BY seq DESC LIMIT 1`);
  const row = result.rows[0] as { seq: string; bytes: number } | undefined;
  return row === undefined ? { seq: 0, bytes: 0 } : { seq: Number(row.seq), bytes: Number(row.bytes) };
}

/**
 * Writes snapshots in the background, one at a time, each in its own short transaction and only
 * if the stored event at its seq has the state's head hash. A snapshot is a cache: a failed write
 * changes no decision and is not retried.
 *
 * Every host sharing the log folds every event, so a writer that counted only its own snapshots
 * would make each of N hosts write one per gap: N times the snapshots the log needs (measured: 432
 * for 56,000 events from 16 processes, where 28 would do). So a writer whose gap has passed looks, in a
 * transaction holding the log's snapshot lock (taken with try: a host finding it held skips, since
 * another is writing), at the newest stored snapshot, and writes only if that one is a whole gap
 * behind; otherwise it waits until that snapshot is. Under the lock one snapshot per gap is written
 * however the hosts' looks interleave. Each look is put off by a random stagger of up to a quarter
 * of the gap, so that hosts which learnt of the same snapshot do not all look at the same event.
 */
export class SnapshotWriter {
  /** The head seq from which this writer next looks at the stored snapshots. */
  private nextLookAt = 0;
  /** The newest snapshot's size as this writer last knew it (sets the gap). */
  private knownBytes = 0;
  private writing: Promise<void> | undefined;
  private writtenCount = 0;

  constructor(
    private readonly pool: PostgresPool,
    private readonly tables: PostgresTables,
    private readonly every: number,
    private readonly readonly: boolean,
    private readonly timeoutMs: number,
  ) {}

  /** Reads where the newest stored snapshot is (after open). */
  async load(): Promise<void> {
    const client = await this.pool.connect(performance.now() + this.timeoutMs);
    try {
      const newest = await newestSnapshot(client, this.tables);
      this.knownBytes = newest.bytes;
      this.nextLookAt = newest.seq + this.staggeredGap();
    } catch (error) {
      client.fail();
      throw error;
    } finally {
      client.release();
    }
  }

  offer(state: LedgerState): void {
    if (this.readonly || this.every === 0 || this.writing !== undefined) return;
    if (state.head.seq < this.nextLookAt) return;
    this.writing = this.writeUnlessFresh(state)
      .catch(() => {
        // Failed (busy, unreachable): look again a gap from here.
        this.nextLookAt = state.head.seq + this.staggeredGap();
      })
      .finally(() => (this.writing = undefined));
  }

  /** Snapshots this writer has written (tests and the benchmark count them). */
  get written(): number {
    return this.writtenCount;
  }

  idle(): Promise<void> {
    return this.writing ?? Promise.resolve();
  }

  private gap(): number {
    return snapshotGap(this.every, this.knownBytes);
  }

  private staggeredGap(): number {
    const gap = this.gap();
    return gap + Math.floor(Math.random() * Math.floor(gap / 4 + 1));
  }

  private async writeUnlessFresh(state: LedgerState): Promise<void> {
    const client = await this.pool.connect(performance.now() + this.timeoutMs);
    try {
      const [, lock] = await client.queries(`BEGIN; ${trySnapshotLockStatement(this.tables)}`);
      if (lock?.rowCount !== 1) {
        // Another host is writing one: look again a gap from here.
        await client.query('ROLLBACK');
        this.nextLookAt = state.head.seq + this.staggeredGap();
        return;
      }
      const newest = await newestSnapshot(client, this.tables);
      if (newest.seq > 0) this.knownBytes = newest.bytes;
      if (state.head.seq - newest.seq < this.gap()) {
        // Another host wrote one recently: look again once it is a gap behind.
        await client.query('ROLLBACK');
        this.nextLookAt = newest.seq + this.staggeredGap();
        return;
      }
      const text = JSON.stringify(state);
      const inserted = await client.query(
        `INSERT INTO ${this.tables.snapshots} (seq, head_hash, state, state_hash)
         SELECT $1, $2, $3, $4 WHERE EXISTS (SELECT 1 FROM ${this.tables.events} WHERE seq = $1 AND hash = $2)
         ON CONFLICT (seq) DO NOTHING`,
        [state.head.seq, state.head.hash, text, sha256Hex(text)],
      );
      await client.query(`DELETE FROM ${this.tables.snapshots} WHERE seq NOT IN (SELECT seq FROM ${this.tables.snapshots} ORDER BY seq DESC LIMIT ${snapshotsKeptMax})`);
      await client.query('COMMIT');
      if (inserted.rowCount === 1) this.writtenCount++;
      this.knownBytes = text.length; // the gap is a rough rule: characters stand in for bytes
      this.nextLookAt = state.head.seq + this.staggeredGap();
    } catch (error) {
      client.fail();
      throw error;
    } finally {
      client.release();
    }
  }
}

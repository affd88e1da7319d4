import { sha256Hex } from '../../domain/chain';
import { keyContainersCurrent } from '../../domain/idempotency';
import type { LedgerState } from '../../domain/state';
import { snapshotGap, snapshotsKeptMax } from '../shared/snapshotPolicy';
import { freezeJson } from '../../domain/freezeJson';
import type { PostgresTables } from './postgresLocking';
import type { HeldClient, PostgresPool } from './postgresPool';

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

/**
 * Writes snapshots in the background, one at a time, each in its own short transaction and only
 * if the stored event at its seq has the state's head hash. A snapshot is a cache: a failed write
 * changes no decision and is not retried.
 */
export class SnapshotWriter {
  private lastSeq = 0;
  private lastBytes = 0;
  private writing: Promise<void> | undefined;

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
      const result = await client.query(`SELECT seq, length(state) AS bytes FROM ${this.tables.snapshots} ORDER BY seq DESC LIMIT 1`);
      const row = result.rows[0] as { seq: string; bytes: number } | undefined;
      this.lastSeq = row === undefined ? 0 : Number(row.seq);
      this.lastBytes = row === undefined ? 0 : Number(row.bytes);
    } catch (error) {
      client.fail();
      throw error;
    } finally {
      client.release();
    }
  }

  offer(state: LedgerState): void {
    if (this.readonly || this.every === 0 || this.writing !== undefined) return;
    if (state.head.seq - this.lastSeq < snapshotGap(this.every, this.lastBytes)) return;
    this.lastSeq = state.head.seq;
    this.writing = this.write(state)
      .catch(() => undefined)
      .finally(() => (this.writing = undefined));
  }

  idle(): Promise<void> {
    return this.writing ?? Promise.resolve();
  }

  private async write(state: LedgerState): Promise<void> {
    const text = JSON.stringify(state);
    this.lastBytes = text.length;
    const client = await this.pool.connect(performance.now() + this.timeoutMs);
    try {
      await client.query('BEGIN');
      await client.query(
        `INSERT INTO ${this.tables.snapshots} (seq, head_hash, state, state_hash)
         SELECT $1, $2, $3, $4 WHERE EXISTS (SELECT 1 FROM ${this.tables.events} WHERE seq = $1 AND hash = $2)
         ON CONFLICT (seq) DO NOTHING`,
        [state.head.seq, state.head.hash, text, sha256Hex(text)],
      );
      await client.query(`DELETE FROM ${this.tables.snapshots} WHERE seq NOT IN (SELECT seq FROM ${this.tables.snapshots} ORDER BY seq DESC LIMIT ${snapshotsKeptMax})`);
      await client.query('COMMIT');
    } catch (error) {
      client.fail();
      throw error;
    } finally {
      client.release();
    }
  }
}

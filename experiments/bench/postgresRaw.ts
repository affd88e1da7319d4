import type { Pool } from 'pg';
import type { EventRow } from '../../src/stores/shared/eventRows';

/** One stored row's columns, as the ledger writes them (seq is left to the raw table's identity). */
export type RawRow = Omit<EventRow, 'seq'>;

/** The baseline's table: the events table's columns and index, with no trigger, chain or lock. */
export function rawTableSql(table: string): string {
  return `CREATE TABLE ${table} (seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, type text NOT NULL, at bigint NOT NULL,
    grant_id text, tool text, call_id text, reason text, input_bytes bigint, hash text NOT NULL, prev_hash text NOT NULL, body text NOT NULL);
    CREATE INDEX ON ${table} (grant_id, seq);`;
}

/**
 * Callers queue their rows; one `write` at a time takes everything queued (group commit, as the
 * ledger groups its batches).
 */
export abstract class GroupBatcher {
  private queue: { rows: readonly RawRow[]; done: (error?: unknown) => void }[] = [];
  private busy = false;

  insert(rows: readonly RawRow[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ rows, done: (error) => (error === undefined ? resolve() : reject(error)) });
      if (!this.busy) void this.drain();
    });
  }

  protected abstract write(rows: readonly RawRow[]): Promise<void>;

  private async drain(): Promise<void> {
    this.busy = true;
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      try {
        await this.write(batch.flatMap((b) => b.rows));
        for (const b of batch) b.done();
      } catch (error) {
        for (const b of batch) b.done(error);
      }
    }
    this.busy = false;
  }
}

/** Raw batched INSERTs: each batch one INSERT … SELECT FROM unnest(…) (autocommit). */
export class RawBatcher extends GroupBatcher {
  constructor(
    private readonly pool: Pool,
    private readonly table: string,
  ) {
    super();
  }

  protected async write(rows: readonly RawRow[]): Promise<void> {
    const col = <K extends keyof RawRow>(k: K): RawRow[K][] => rows.map((r) => r[k]);
    await this.pool.query(
      `INSERT INTO ${this.table} (type, at, grant_id, tool, call_id, reason, input_bytes, hash, prev_hash, body)
       SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::text[], $9::text[], $10::text[])`,
      [col('type'), col('at'), col('grant_id'), col('tool'), col('call_id'), col('reason'), col('input_bytes'), col('hash'), col('prev_hash'), col('body')],
    );
  }
}

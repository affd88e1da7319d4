import type { Pool } from 'pg';
import { stringLiteral } from '../../src/stores/postgres/postgresSql';
import { GroupBatcher, type RawRow } from './postgresRaw';

/**
 * The ledger's write protocol with the ledger taken out: each batch is one transaction that takes a
 * transaction-scoped advisory lock (the ledger's before issue 30; it now locks a row, which also writes
 * a small WAL record: kept here so that this ceiling stays comparable with the runs recorded) and reads (as one text, split but never parsed) every row other
 * processes appended since this one last looked, in one round trip; then inserts the batch, commits
 * asynchronously and flushes the WAL, in a second. No body is parsed, no chain or hash checked,
 * nothing folded or decided. What this reaches bounds what any ledger using the protocol can reach.
 */
export class SkeletonBatcher extends GroupBatcher {
  private lastSeen = 0;
  /** Rows other processes had appended, summed over this process's batches. */
  foreignRows = 0;

  constructor(
    private readonly pool: Pool,
    private readonly table: string,
  ) {
    super();
  }

  protected async write(rows: readonly RawRow[]): Promise<void> {
    const client = await this.pool.connect();
    try {
      const read = (await client.query(
        `BEGIN ISOLATION LEVEL READ COMMITTED; SELECT pg_advisory_xact_lock(hashtext(${stringLiteral(this.table)})); ` +
          `SELECT max(seq) AS last, count(*) AS n, string_agg(body, E'\\n' ORDER BY seq) AS bodies FROM ${this.table} WHERE seq > ${this.lastSeen} AND seq <= 9223372036854775807`,
      )) as unknown as { rows: { last: string | null; n: string; bodies: string | null }[] }[];
      const found = read[read.length - 1]?.rows[0];
      if (found !== undefined && found.last !== null) {
        this.lastSeen = Number(found.last);
        this.foreignRows += Number(found.n);
        found.bodies?.split('\n');
      }
      const values = rows
        .map((r) => `(${[r.type, String(r.at), r.grant_id, r.tool, r.call_id, r.reason, r.input_bytes === null ? null : String(r.input_bytes), r.hash, r.prev_hash, r.body].map((v) => (v === null ? 'NULL' : stringLiteral(v))).join(', ')})`)
        .join(', ');
      const written = (await client.query(
        `INSERT INTO ${this.table} (type, at, grant_id, tool, call_id, reason, input_bytes, hash, prev_hash, body) VALUES ${values} RETURNING seq; ` +
          `SET LOCAL synchronous_commit = off; COMMIT; SELECT pg_logical_emit_message(true, 'atc/flush', '')`,
      )) as unknown as { rows: { seq: string }[] }[];
      for (const r of written[0]?.rows ?? []) this.lastSeen = Math.max(this.lastSeen, Number(r.seq));
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }
}

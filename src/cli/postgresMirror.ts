import type Database from 'better-sqlite3';
import { Client } from 'pg';
import { LedgerError } from '../errors';
import { openConnection } from '../stores/sqlite/sqliteConnection';
import { quoteIdent } from '../stores/postgres/postgresSql';
import type { PostgresTarget } from '../stores/postgres/postgresTarget';

/** Problems with the PostgreSQL schema itself (the append-only triggers), as `atc verify` reports them. */
export interface SchemaProblem {
  readonly seq: undefined;
  readonly code: 'schema';
  readonly message: string;
}

const requiredTriggers = ['events_refuse_update_delete', 'events_refuse_truncate'] as const;
const pageRows = 10_000;
const connectTimeoutMs = 10_000;

/**
 * A read-only copy of a PostgreSQL log in an in-memory SQLite database with the SQLite store's
 * schema, so that `atc audit | verify | export` run exactly the code (and print exactly the output)
 * they run on a SQLite file. Rows are copied as stored, columns and all, so `verify` still sees any
 * column that disagrees with its body. `sync()` copies what was appended since (audit --follow).
 */
export class PostgresMirror {
  private copiedSeq = 0;

  private constructor(
    readonly db: Database.Database,
    private readonly client: Client,
    private readonly schema: string,
  ) {}

  static async open(target: PostgresTarget): Promise<PostgresMirror> {
    const client = new Client({ connectionString: target.connectionString, connectionTimeoutMillis: connectTimeoutMs, statement_timeout: 60_000 });
    // A backend that dies mid-read rejects the query; the event must not crash the CLI.
    client.on('error', () => undefined);
    try {
      await client.connect();
      const present = await client.query('SELECT to_regclass($1) IS NOT NULL AS present', [`${quoteIdent(target.schema)}.events`]);
      if (present.rows[0]?.present !== true) throw new LedgerError('store_failed', `${target.display} has no ledger in schema ${target.schema}`);
    } catch (error) {
      await client.end().catch(() => undefined);
      if (error instanceof LedgerError) throw error;
      throw new LedgerError('store_failed', `cannot read the PostgreSQL log ${target.display}: ${(error as { code?: string }).code ?? (error as Error).message}`, { cause: error });
    }
    const db = openConnection({ path: ':memory:', busyTimeoutMs: 5_000, synchronous: 'FULL' }).db;
    const mirror = new PostgresMirror(db, client, target.schema);
    try {
      await mirror.copySnapshots();
      await mirror.sync();
    } catch (error) {
      await mirror.close();
      throw new LedgerError('store_failed', `cannot read the PostgreSQL log ${target.display}: ${(error as { code?: string }).code ?? (error as Error).message}`, { cause: error });
    }
    return mirror;
  }

  /** The append-only triggers that are missing or disabled on the PostgreSQL events table. */
  async schemaProblems(): Promise<SchemaProblem[]> {
    const result = await this.client.query(
      `SELECT t.tgname, t.tgenabled FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.relname = 'events' AND NOT t.tgisinternal`,
      [this.schema],
    );
    const enabled = new Set((result.rows as { tgname: string; tgenabled: string }[]).filter((r) => r.tgenabled !== 'D').map((r) => r.tgname));
    return requiredTriggers
      .filter((name) => !enabled.has(name))
      .map((name) => ({ seq: undefined, code: 'schema', message: `trigger ${name} is missing or disabled: the events table is no longer append-only` }));
  }

  /** Copies the events appended after the last copied one; returns how many. */
  async sync(): Promise<number> {
    const insert = this.db.prepare(
      'INSERT INTO events (seq, type, at, grant_id, tool, call_id, reason, input_bytes, hash, prev_hash, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    let copied = 0;
    for (;;) {
      const result = await this.client.query(
        `SELECT seq, type, at, grant_id, tool, call_id, reason, input_bytes, hash, prev_hash, body FROM ${quoteIdent(this.schema)}.events WHERE seq > $1 ORDER BY seq LIMIT ${pageRows}`,
        [this.copiedSeq],
      );
      const rows = result.rows as Record<string, string | null>[];
      this.db.transaction(() => {
        for (const r of rows) insert.run(Number(r.seq), r.type, Number(r.at), r.grant_id, r.tool, r.call_id, r.reason, r.input_bytes === null ? null : Number(r.input_bytes), r.hash, r.prev_hash, r.body);
      })();
      copied += rows.length;
      if (rows.length > 0) this.copiedSeq = Number(rows[rows.length - 1]?.seq);
      if (rows.length < pageRows) return copied;
    }
  }

  async close(): Promise<void> {
    this.db.close();
    await this.client.end().catch(() => undefined);
  }

  private async copySnapshots(): Promise<void> {
    const result = await this.client.query(`SELECT seq, head_hash, state, state_hash, created_at FROM ${quoteIdent(this.schema)}.snapshots ORDER BY seq`);
    const insert = this.db.prepare('INSERT INTO snapshots (seq, head_hash, state, state_hash, created_at) VALUES (?, ?, ?, ?, ?)');
    for (const r of result.rows as { seq: string; head_hash: string; state: string; state_hash: string; created_at: Date }[]) {
      insert.run(Number(r.seq), r.head_hash, r.state, r.state_hash, new Date(r.created_at).toISOString());
    }
  }
}

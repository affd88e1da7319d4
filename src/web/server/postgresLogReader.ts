import { Pool } from 'pg';
import { quoteIdent, schemaNamePattern } from '../../stores/postgres/postgresSql';
import { storedBodyBytesMax, type LogReader, type StoredBody } from './logReader';

/** A connection string without its password, for messages. */
export function redactedUrl(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    if (url.password !== '') url.password = '***';
    return url.toString();
  } catch {
    return 'postgres://…';
  }
}

/**
 * Reads a PostgreSQL log (the tables postgresStore writes, in `schema`) over a small pool whose
 * sessions are read-only (`default_transaction_read_only`), every query bounded by `timeoutMs`.
 * Pool and client errors are absorbed: a dead server fails the current stream (the browser
 * reconnects), never the process. Resolves once the log's table answers, so a bad URL fails at start.
 */
export async function postgresLogReader(connectionString: string, schema = 'atc', timeoutMs = 10_000): Promise<LogReader> {
  if (!schemaNamePattern.test(schema)) throw new Error(`--schema ${JSON.stringify(schema)} is not a plain lower-case schema name`);
  const pool = new Pool({
    connectionString,
    max: 2,
    connectionTimeoutMillis: timeoutMs,
    idleTimeoutMillis: 10_000,
    allowExitOnIdle: true,
    statement_timeout: timeoutMs,
    options: '-c default_transaction_read_only=on',
  });
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  const events = `${quoteIdent(schema)}.events`;
  const label = redactedUrl(connectionString);
  try {
    await pool.query(`SELECT 1 FROM ${events} LIMIT 1`);
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw new Error(`cannot read the PostgreSQL log ${label} (schema ${schema}): ${(error as Error).message}`);
  }
  return {
    label,
    headSeq: async () => Number((await pool.query<{ head: string }>(`SELECT coalesce(max(seq), 0) AS head FROM ${events}`)).rows[0]?.head ?? 0),
    bodiesAfter: async (after, limit) => {
      // octet_length reads a stored text's size from its header (a TOASTed one is not fetched), so a
      // body over the bound is neither read by the server nor sent.
      const result = await pool.query<{ seq: string; body: string | null }>({
        text: `SELECT seq, CASE WHEN octet_length(body) <= $3 THEN body END AS body FROM ${events} WHERE seq > $1 ORDER BY seq LIMIT $2`,
        values: [after, limit, storedBodyBytesMax],
      });
      return result.rows.map((row): StoredBody => ({ seq: Number(row.seq), body: row.body ?? undefined }));
    },
    close: async () => {
      await pool.end().catch(() => undefined);
    },
  };
}

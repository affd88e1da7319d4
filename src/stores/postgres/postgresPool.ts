import { Pool, type PoolClient, type QueryResult } from 'pg';
import { ConnectionLost, StoreTimeout } from './postgresErrors';

/**
 * The store's access to the server: clients taken from a pool within a deadline, every round trip
 * bounded by it too, and every 'error' event handled (a backend that dies must never crash the
 * host). A pool the store created is ended by `end()`; a pool the caller passed in is only let go.
 */
export class PostgresPool {
  /** The last error the pool or a client reported outside a query (for diagnostics only). */
  lastError: unknown;
  private readonly onPoolError = (error: unknown): void => {
    this.lastError = error;
  };

  constructor(
    readonly pool: Pool,
    private readonly owned: boolean,
  ) {
    pool.on('error', this.onPoolError);
  }

  static create(connectionString: string, timeoutMs: number, poolSizeMax: number): PostgresPool {
    const pool = new Pool({
      connectionString,
      max: poolSizeMax,
      connectionTimeoutMillis: timeoutMs,
      keepAlive: true,
      // A lost server is noticed by the deadline below; idle clients are not kept around for long.
      idleTimeoutMillis: 10_000,
      allowExitOnIdle: true,
    });
    return new PostgresPool(pool, true);
  }

  /** A client, or a rejection once `deadline` (performance.now()) passes. */
  async connect(deadline: number): Promise<HeldClient> {
    const pending = this.pool.connect();
    const client = await withDeadline(pending, deadline, 'connect', (late) => void late.then((c) => c.release(true), () => undefined));
    return new HeldClient(client, deadline);
  }

  async end(): Promise<void> {
    if (this.owned) await this.pool.end();
    // A passed-in pool stays the caller's; only our listener goes (after end: late errors stay handled).
    else this.pool.off('error', this.onPoolError);
  }
}

/** One checked-out client: queries bounded by the deadline; released once, destroyed when broken. */
export class HeldClient {
  private broken: Error | undefined;
  private released = false;
  private readonly onError = (error: Error): void => {
    this.broken = new ConnectionLost(`the connection failed: ${error.message}`);
  };

  constructor(
    private readonly client: PoolClient,
    private readonly deadline: number,
  ) {
    client.on('error', this.onError);
  }

  async query(text: string, values?: readonly unknown[]): Promise<QueryResult> {
    if (this.broken !== undefined) throw this.broken;
    const pending = values === undefined ? this.client.query(text) : this.client.query(text, values as unknown[]);
    try {
      return await withDeadline(pending, this.deadline, 'query', (late) => void late.catch(() => undefined));
    } catch (error) {
      this.broken = error instanceof Error ? error : new Error(String(error));
      throw error;
    }
  }

  /** Several statements in one round trip (simple protocol, no parameters): each one's result. */
  async queries(text: string): Promise<QueryResult[]> {
    const result = (await this.query(text)) as QueryResult | QueryResult[];
    return Array.isArray(result) ? result : [result];
  }

  /** Marks the client as not reusable (its transaction state is unknown). */
  fail(): void {
    this.broken ??= new Error('failed');
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    // The pool's own idle listener handles errors from here on; a broken client is destroyed.
    this.client.off('error', this.onError);
    this.client.release(this.broken !== undefined ? this.broken : undefined);
  }
}

/**
 * `promise`, or a StoreTimeout once `deadline` passes. `abandon` receives the promise that lost the
 * race so that its late result can be cleaned up.
 */
export async function withDeadline<T>(promise: Promise<T>, deadline: number, what: string, abandon: (late: Promise<T>) => void): Promise<T> {
  const remaining = deadline - performance.now();
  if (remaining <= 0) {
    abandon(promise);
    throw new StoreTimeout(`${what}: no time left`);
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreTimeout(`${what} took longer than the deadline`)), remaining);
  });
  try {
    return await Promise.race([promise, timeout]);
  } catch (error) {
    if (error instanceof StoreTimeout) abandon(promise);
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

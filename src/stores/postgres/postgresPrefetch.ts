import { createHash, randomBytes } from 'node:crypto';
import { Client, type ClientConfig, type Notification } from 'pg';
import { eventHash } from '../../domain/chain';
import type { LedgerEvent } from '../../domain/events';
import { markHashChecked } from '../../stream/hashChecked';
import { eventOfBody, rowOf, type EventRow } from '../shared/eventRows';
import { insertRowsStatement } from './postgresAppend';
import { intLiteral, stringLiteral } from './postgresSql';

/**
 * PostgreSQL refuses a NOTIFY payload of 8,000 bytes or more; below this the batch's bodies travel
 * with its notification, above it the notification is not sent (listeners then parse the rows read
 * under the lock, as without prefetching). Bytes as UTF-8, with room for another server encoding.
 */
export const notifyPayloadBytesMax = 7_000;
/** Pre-verified events kept at most (the oldest go first), so a flood of notifications is bounded. */
export const prefetchedEventsMax = 8_192;
/** How long a listener that failed waits before it connects again. */
const reconnectMs = 1_000;

interface Prefetched {
  readonly body: string;
  readonly event: LedgerEvent;
}

/** The NOTIFY channel of a schema's log: a short digest, since a channel name is at most 63 bytes. */
export function notifyChannel(schema: string): string {
  return `atc_${createHash('sha256').update(schema).digest('hex').slice(0, 16)}`;
}

/**
 * Events other writers appended, parsed and hash-checked before this ledger needs them, so that the
 * write transaction, which must fold them under the log's lock, finds that work done.
 *
 * Each write transaction notifies the log's channel with its batch's bodies (`notifyStatement`, in the
 * transaction, so the notification is delivered at its commit, in commit order). A session of its own
 * listens; each body received is parsed and its hash checked (`markHashChecked`) while this ledger
 * waits for the lock or runs tools. Nothing received is folded, published or trusted: under the lock
 * the store reads the rows as before, and uses a prefetched event only when its body is exactly the
 * row's body text, so what is folded is the log's content, checked as before (seq and chain by
 * `foldForeign`, the hash here instead of there). A notification that is late, lost, forged (any
 * role may NOTIFY any channel) or too big costs only the parse it would have saved; a listener that
 * cannot connect (behind PgBouncer in transaction mode it receives nothing) changes nothing else.
 */
export class ForeignPrefetch {
  /** Names this store's own notifications, which it skips (its events are already folded). */
  readonly sender = randomBytes(8).toString('hex');
  readonly channel: string;
  /** Called after each notification from another writer has been taken in (tests wait on it). */
  observer: (() => void) | undefined;
  private readonly bySeq = new Map<number, Prefetched>();
  private client: Client | undefined;
  private attempt: Promise<boolean> | undefined;
  private failedAt = -Infinity;
  private closed = false;

  constructor(
    private readonly config: ClientConfig,
    schema: string,
  ) {
    this.channel = notifyChannel(schema);
  }

  /** Connects and LISTENs in the background (never awaited by a write); again after a failure, at most once a second. */
  start(): void {
    if (this.closed || this.client !== undefined || performance.now() - this.failedAt < reconnectMs) return;
    const client = new Client({ ...this.config, keepAlive: true });
    this.client = client;
    const fail = (): void => {
      if (this.client !== client) return;
      this.client = undefined;
      this.failedAt = performance.now();
      void client.end().catch(() => undefined);
    };
    client.on('error', fail);
    client.on('end', fail);
    client.on('notification', (message: Notification) => {
      if (message.channel === this.channel && message.payload !== undefined) this.receive(message.payload);
    });
    this.attempt = (async () => {
      try {
        await client.connect();
        // Closed while connecting: ended with its socket still ref'd (see `close`).
        if (this.closed) {
          await client.end();
          return false;
        }
        // Like the pool (allowExitOnIdle), this session must not keep an idle host process alive.
        socketOf(client)?.unref?.();
        await client.query(`LISTEN "${this.channel}"`);
        return this.client === client;
      } catch {
        fail();
        return false;
      }
    })();
  }

  /** The prefetched event at `seq` if its body is exactly `body` (the row read under the lock), else undefined. */
  take(seq: number, body: string): LedgerEvent | undefined {
    const found = this.bySeq.get(seq);
    return found !== undefined && found.body === body ? found.event : undefined;
  }

  /** Drops what the ledger has folded (up to `seq`): it is never needed again. */
  forget(throughSeq: number): void {
    for (const seq of this.bySeq.keys()) {
      if (seq > throughSeq) continue;
      this.bySeq.delete(seq);
    }
  }

  /** How many events are held (for tests). */
  get size(): number {
    return this.bySeq.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.bySeq.clear();
    const client = this.client;
    this.client = undefined;
    // Its socket was unref'd so that an idle host may exit; ended unref'd, a host whose ledger holds
    // nothing else open would exit while `close` waits, before anything after it runs.
    socketOf(client)?.ref?.();
    await client?.end().catch(() => undefined);
  }

  /** Whether the latest connection attempt got as far as LISTEN (for tests and diagnostics). */
  whenListening(): Promise<boolean> {
    return this.attempt ?? Promise.resolve(false);
  }

  /**
   * Takes in one notification's payload: the sender's id, then one canonical body per line. Hostile
   * input (any role may NOTIFY): bounded by the server (under 8,000 bytes), never throws.
   */
  receive(payload: string): void {
    const lines = payload.split('\n');
    if (lines[0] === this.sender || lines.length < 2) return;
    try {
      this.hold(lines);
    } finally {
      this.observer?.();
    }
  }

  private hold(lines: readonly string[]): void {
    for (let i = 1; i < lines.length; i++) {
      const body = lines[i] as string;
      const event = checkedEvent(body);
      if (event === undefined) continue;
      this.bySeq.delete(event.seq);
      this.bySeq.set(event.seq, { body, event });
    }
    if (this.bySeq.size > prefetchedEventsMax) {
      for (const seq of this.bySeq.keys()) {
        this.bySeq.delete(seq);
        if (this.bySeq.size <= prefetchedEventsMax) break;
      }
    }
  }
}

/** The client's socket (pg keeps it on its connection), to ref or unref. */
function socketOf(client: Client | undefined): { ref?: () => void; unref?: () => void } | undefined {
  return (client as unknown as { connection?: { stream?: { ref?: () => void; unref?: () => void } } } | undefined)?.connection?.stream;
}

/** The event of `body` when it parses and its hash is its content's, else undefined. */
function checkedEvent(body: string): LedgerEvent | undefined {
  try {
    const event = eventOfBody(body);
    if (!Number.isSafeInteger(event.seq) || typeof event.hash !== 'string' || eventHash(event) !== event.hash) return undefined;
    markHashChecked(event);
    return event;
  } catch {
    return undefined;
  }
}

/**
 * The batch's INSERT followed by the NOTIFY of its bodies (`ForeignPrefetch`), in the same
 * transaction, so that the notification is delivered at its commit, in commit order.
 */
export function notifyingInsert(eventsTable: string, events: readonly LedgerEvent[], prefetch: ForeignPrefetch): string {
  const rows = events.map(rowOf);
  const notify = notifyStatement(eventsTable, rows, prefetch);
  return insertRowsStatement(eventsTable, rows) + (notify === '' ? '' : `; ${notify}`);
}

/**
 * The NOTIFY of a batch just inserted (under the lock, so the rows from its first seq on are its
 * own), or '' when the payload would not fit (`notifyPayloadBytesMax`). The server reads the bodies
 * back (a few rows by primary key) rather than receiving them twice. It notifies only if the batch's
 * first row is there with its hash, so after a conditional insert that wrote nothing it sends nothing.
 * A canonical body holds no line break, so one per line is unambiguous.
 */
export function notifyStatement(eventsTable: string, rows: readonly EventRow[], prefetch: ForeignPrefetch): string {
  const first = rows[0];
  if (first === undefined) return '';
  let bytes = prefetch.sender.length;
  for (const row of rows) bytes += 1 + Buffer.byteLength(row.body);
  if (bytes > notifyPayloadBytesMax) return '';
  return (
    `SELECT pg_notify('${prefetch.channel}', '${prefetch.sender}' || E'\\n' || string_agg(body, E'\\n' ORDER BY seq)) FROM ${eventsTable} ` +
    `WHERE seq >= ${intLiteral(first.seq)} HAVING bool_or(seq = ${intLiteral(first.seq)} AND hash = ${stringLiteral(first.hash)})`
  );
}

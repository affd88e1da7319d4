/**
 * A stored body over this many bytes (UTF-8) is withheld: a reader neither reads nor sends it, and
 * the page reports that seq as unverifiable. Compared in SQL (`octet_length`), which both stores
 * answer from the value's header, so six requests over 5 MB bodies no longer read 0.6–0.9 GB.
 */
export const storedBodyBytesMax = 1_048_576;

/**
 * One stored event as the audit view sends it: the stored canonical JSON body, untouched, or
 * `undefined` when it was withheld (over `storedBodyBytesMax`, or not text).
 */
export interface StoredBody {
  readonly seq: number;
  readonly body: string | undefined;
}

/**
 * What the audit server needs from a log: its head and the stored bodies after a seq, in seq order.
 * Async so that a network store can implement it; the SQLite reader answers synchronously inside.
 */
export interface LogReader {
  /** A name for messages (a file path; never a password-bearing URL). */
  readonly label: string;
  headSeq(): Promise<number>;
  /** At most `limit` stored events with `seq > after`, in seq order; a body over the bound is never read. */
  bodiesAfter(after: number, limit: number): Promise<readonly StoredBody[]>;
  close(): Promise<void>;
}

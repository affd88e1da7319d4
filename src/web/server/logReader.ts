/** One stored event as the audit view sends it: the stored canonical JSON body, untouched. */
export interface StoredBody {
  readonly seq: number;
  readonly body: string;
}

/**
 * What the audit server needs from a log: its head and the stored bodies after a seq, in seq order.
 * Async so that a network store can implement it; the SQLite reader answers synchronously inside.
 */
export interface LogReader {
  /** A name for messages (a file path; never a password-bearing URL). */
  readonly label: string;
  headSeq(): Promise<number>;
  /** At most `limit` stored events with `seq > after`, in seq order. */
  bodiesAfter(after: number, limit: number): Promise<readonly StoredBody[]>;
  close(): Promise<void>;
}

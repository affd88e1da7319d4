import type { LedgerEvent } from '../../domain/events';

/**
 * Something that follows the log as the ledger commits it. The core only feeds it: it imports no
 * Merkle code. Called synchronously and in log order; `appended` must not throw.
 */
export interface LogFollower {
  /** Once, when the ledger opens, before any command; throwing (LedgerError) refuses to open. */
  open(log: FollowedLog): void;
  /** Events committed to the log (this ledger's and other writers'), in order, each exactly once. */
  appended(events: readonly LedgerEvent[]): void;
  /** Text the store may keep beside a snapshot at the current head, handed back at the next open. */
  snapshotText?(): string;
  /** When the ledger closes, after its last commit. */
  close?(): void;
}

/** What a LogFollower sees of the log when the ledger opens. */
export interface FollowedLog {
  readonly head: { readonly seq: number; readonly hash: string };
  /** The snapshot the ledger opened from, and what this follower saved beside it (if anything). */
  readonly snapshot: { readonly seq: number; readonly text: string | undefined } | undefined;
  /** The stored events' hashes with afterSeq < seq ≤ throughSeq, in order (streamed). */
  hashes(afterSeq: number, throughSeq: number): Iterable<string>;
}

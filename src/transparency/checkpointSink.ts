import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import type { Checkpoint } from './checkpoint';

/** A checkpoint the ledger signed, with the consistency proof from the one it signed before. */
export interface PublishedCheckpoint {
  /** The signed note: checkpoint body, blank line, signature line. */
  readonly note: string;
  readonly checkpoint: Checkpoint;
  /** The previous signed checkpoint's size and root (undefined for the first one). */
  readonly previous: { readonly size: number; readonly root: Uint8Array } | undefined;
  /** RFC 9162 consistency proof from `previous` to this checkpoint (empty without a previous one). */
  readonly consistencyProof: readonly Uint8Array[];
}

/**
 * Where checkpoints go. `latest`, when present, gives back the last one published (so a restarted
 * ledger checks its log against it); `publish` may throw (the publisher reports it, the ledger goes on).
 */
export interface CheckpointSink {
  publish(published: PublishedCheckpoint): void;
  latest?(): string | undefined;
}

/**
 * A file holding the latest signed checkpoint, replaced atomically (written beside it, fsynced,
 * renamed). Keep it outside the database's directory (another disk, host or bucket is better): a
 * checkpoint the log cannot roll back is the point.
 */
export function fileCheckpointSink(path: string): CheckpointSink {
  if (typeof path !== 'string' || path.length === 0) throw new TypeError('fileCheckpointSink needs a path');
  return {
    publish({ note }) {
      const temporary = `${path}.${process.pid}.tmp`;
      const fd = openSync(temporary, 'w', 0o644);
      try {
        writeSync(fd, note);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(temporary, path);
    },
    latest() {
      try {
        return readFileSync(path, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
    },
  };
}

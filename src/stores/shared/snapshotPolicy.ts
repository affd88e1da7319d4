/** Snapshots kept per log; older ones are deleted when a new one is written. */
export const snapshotsKeptMax = 2;

/**
 * Events between snapshots: at least `every`, more for big states, so that serializing, hashing and
 * writing a snapshot (~10 ns per byte) stays a few percent of the cost of the events between two.
 */
export function snapshotGap(every: number, stateBytes: number): number {
  return Math.max(every, Math.ceil(stateBytes / snapshotBytesPerEvent));
}
const snapshotBytesPerEvent = 256;

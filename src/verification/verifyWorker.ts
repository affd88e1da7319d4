// Worker side of verifyParallel: the per-event checks that need no state (shape and hash) over a
// prefix of the log, read from shared memory, while the main thread folds and re-decides.
import { parentPort, workerData } from 'node:worker_threads';
import { eventHash } from '../domain/chain';
import type { LedgerEvent } from '../domain/events';
import { eventShapeProblem } from './eventShape';
import { jsonLines } from './jsonLines';

export interface WorkerReport {
  /** Some event is malformed: the main thread then runs the sequential `verify` instead. */
  readonly malformed: boolean;
  /** Indices of well-formed events whose hash does not match their content. */
  readonly hashMismatches: readonly number[];
}

const { bytes, byteEnd } = workerData as { bytes: Uint8Array; byteEnd: number };
let malformed = false;
const hashMismatches: number[] = [];
let index = 0;
for (const raw of jsonLines(bytes, byteEnd)) {
  if (eventShapeProblem(raw) !== undefined) {
    malformed = true;
    break;
  }
  try {
    if (eventHash(raw as LedgerEvent) !== (raw as LedgerEvent).hash) hashMismatches.push(index);
  } catch {
    malformed = true; // let the sequential path raise what `verify` raises
    break;
  }
  index++;
}
const report: WorkerReport = { malformed, hashMismatches };
parentPort?.postMessage(report);

// Worker side of verifyParallel: the per-event checks that need no state (workerChecks.ts) over a
// prefix of the log, read from shared memory, while the main thread folds and re-decides.
import { parentPort, workerData } from 'node:worker_threads';
import { checkShapesAndHashes } from './workerChecks';

const { bytes, byteEnd, duplicates } = workerData as { bytes: Uint8Array; byteEnd: number; duplicates: boolean };
parentPort?.postMessage(checkShapesAndHashes(bytes, byteEnd, duplicates));

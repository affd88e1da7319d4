import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { CheckWorker, CheckWorkerInput } from './verifyParallel';
import type { WorkerReport } from './workerChecks';

/**
 * verifyParallel's worker thread (verifyWorker.js beside this file), or undefined when there is
 * none to start (running from TypeScript sources). The thread plumbing only: what runs in it is
 * workerChecks.ts, what is done with its report is verifyParallel.ts.
 */
export function startVerifyThread(input: CheckWorkerInput): CheckWorker | undefined {
  const script = path.join(__dirname, 'verifyWorker.js');
  if (!existsSync(script)) return undefined;
  const worker = new Worker(script, { workerData: input });
  const report = new Promise<WorkerReport | undefined>((resolve) => {
    worker.once('message', (r: WorkerReport) => resolve(r));
    worker.once('error', () => resolve(undefined));
    worker.once('exit', () => resolve(undefined));
  });
  return { report, terminate: () => worker.terminate() };
}

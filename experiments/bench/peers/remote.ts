import { Worker } from 'node:worker_threads';
import type { RemoteContender } from '../stats';

/** A contender whose rounds run in a worker thread (compiled JS at `script`). */
export function remoteContender(script: string): RemoteContender & { close(): Promise<number> } {
  const worker = new Worker(script);
  return {
    round(start, count, into) {
      return new Promise((resolve, reject) => {
        worker.once('error', reject);
        worker.once('message', (msg: { total: number; lat: Float64Array }) => {
          worker.off('error', reject);
          into.set(msg.lat);
          resolve(msg.total);
        });
        worker.postMessage({ start, count });
      });
    },
    close: () => worker.terminate(),
  };
}

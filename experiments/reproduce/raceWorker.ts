import { parentPort, workerData } from 'node:worker_threads';
import { barrierSlot, raceArgs, type InvokeReply, type InvokeRequest, type RaceWorkerData, type WorkerReport } from './raceProtocol';

/**
 * One agent thread of the concurrency runs. It announces itself, blocks on the shared barrier until
 * the main thread releases all workers together, then makes its attempts one after another through
 * its port (the ledger lives in the main thread), and reports the decisions.
 */
function main(data: RaceWorkerData): void {
  const cells = new Int32Array(data.barrier);
  Atomics.add(cells, barrierSlot.arrived, 1);
  const report = (message: WorkerReport): void => parentPort?.postMessage(message);
  report({ kind: 'arrived' });
  Atomics.wait(cells, barrierSlot.go, 0); // returns at once if the main thread already released

  const replies: InvokeReply[] = [];
  const send = (attempt: number): void => {
    const request: InvokeRequest = { attempt, token: data.token, tool: data.tool, argsJson: JSON.stringify(raceArgs(data.worker, attempt)) };
    data.port.postMessage(request);
  };
  data.port.on('message', (reply: InvokeReply) => {
    replies.push(reply);
    if (replies.length < data.attempts) {
      send(replies.length);
      return;
    }
    report({ kind: 'done', replies });
    data.port.close();
  });
  send(0);
}

main(workerData as RaceWorkerData);

// Runs Cedar rounds in a worker thread: Node 20's V8 aborts (a deoptimizer fatal error) when
// cedar-wasm and the ledger run interleaved in one isolate, so Cedar gets its own.
import { parentPort } from 'node:worker_threads';
import { request } from '../policy';
import { now } from '../stats';
import { cedarPeer } from './cedar';

const cedar = cedarPeer();
parentPort?.on('message', (msg: { start: number; count: number }) => {
  const lat = new Float64Array(msg.count);
  const t0 = now();
  for (let i = 0; i < msg.count; i++) {
    const t = now();
    if (!cedar.call('agent', request(msg.start + i))) throw new Error('cedar denied an allowed call');
    lat[i] = now() - t;
  }
  const total = now() - t0;
  parentPort?.postMessage({ total, lat }, [lat.buffer]);
});

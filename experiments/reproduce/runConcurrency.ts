import { MessageChannel, Worker } from 'node:worker_threads';
import path from 'node:path';
import { createLedger, inputBytesOf, type LedgerEvent, type RejectReason } from '../../src';
import type { AttemptRecord, ConcurrencyRecord } from '../../src/evidence/types';
import { NotesStore } from './notesStore';
import { registerNotesTools } from './notesTools';
import { barrierSlot, barrierSlots, raceArgs, type InvokeReply, type InvokeRequest, type RaceWorkerData, type WorkerReport } from './raceProtocol';

export type ConcurrencyKind = 'calls' | 'bytes';

export interface ConcurrencyOptions {
  readonly workers?: number;
  readonly attemptsPerWorker?: number;
  /** Calls the budget admits. */
  readonly admitted?: number;
}

export interface ConcurrencyRun {
  readonly record: ConcurrencyRecord;
  readonly log: readonly LedgerEvent[];
}

/** Workers cannot load TypeScript: under ts-jest this file is .ts, so point at the compiled worker in dist/. */
export function raceWorkerScript(): string {
  return __filename.endsWith('.js')
    ? path.join(__dirname, 'raceWorker.js')
    : path.resolve(__dirname, '../../dist/experiments/reproduce/raceWorker.js');
}

/**
 * 8 worker threads × 8 attempts against one grant whose budget (calls, or input bytes) admits exactly
 * 7 calls. The ledger stays in this thread; workers hold only the token and send each `invoke`
 * through a MessagePort, after a SharedArrayBuffer barrier releases them together, so all attempts
 * race into the ledger's one serialized command stream.
 */
export async function runConcurrency(kind: ConcurrencyKind, options: ConcurrencyOptions = {}): Promise<ConcurrencyRun> {
  const workers = options.workers ?? 8;
  const attemptsPerWorker = options.attemptsPerWorker ?? 8;
  const admitted = options.admitted ?? 7;
  if (workers > 10 || attemptsPerWorker > 10) throw new RangeError('workers and attempts are single digits so every call has the same size');

  const ledger = createLedger();
  const store = new NotesStore();
  await registerNotesTools(ledger, store);
  const inputBytesPerCall = inputBytesOf(raceArgs(0, 0));
  const budget = kind === 'calls' ? { calls: admitted, inputBytes: 1_000_000 } : { calls: workers * attemptsPerWorker, inputBytes: admitted * inputBytesPerCall };
  const reason: RejectReason = kind === 'calls' ? 'call_budget_exhausted' : 'byte_budget_exhausted';
  const { grantId, token } = await ledger.issue({ tools: ['notes.write'], resources: ['notes:/race/'], expiresAt: Date.now() + 3_600_000, budget });
  const store0 = { notes: store.size, digest: store.digest() };

  const barrier = new SharedArrayBuffer(barrierSlots * Int32Array.BYTES_PER_ELEMENT);
  const cells = new Int32Array(barrier);
  let arrived = 0;
  let release: () => void = () => undefined;
  const allArrived = new Promise<void>((resolve) => (release = resolve));

  const runs = Array.from({ length: workers }, (_, worker) => {
    const channel = new MessageChannel();
    channel.port1.on('message', (request: InvokeRequest) => {
      void ledger.invoke(request.token, request.tool, JSON.parse(request.argsJson) as unknown).then((outcome) => {
        const reply: InvokeReply =
          outcome.status === 'rejected'
            ? { attempt: request.attempt, callId: outcome.callId, status: 'rejected', reason: outcome.reason }
            : { attempt: request.attempt, callId: outcome.callId, status: outcome.status };
        channel.port1.postMessage(reply);
      });
    });
    const data: RaceWorkerData = { worker, attempts: attemptsPerWorker, token, tool: 'notes.write', port: channel.port2, barrier };
    const thread = new Worker(raceWorkerScript(), { workerData: data, transferList: [channel.port2] });
    return new Promise<AttemptRecord[]>((resolve, reject) => {
      let replies: readonly InvokeReply[] | undefined;
      thread.on('message', (report: WorkerReport) => {
        if (report.kind === 'arrived' && ++arrived === workers) release();
        if (report.kind === 'done') replies = report.replies;
      });
      thread.on('error', reject);
      thread.on('exit', (code) => {
        channel.port1.close();
        if (replies === undefined) return reject(new Error(`race worker ${worker} exited (code ${code}) before reporting`));
        resolve(replies.map((r) => ({ worker, attempt: r.attempt, callId: r.callId, outcome: r.status === 'rejected' ? 'rejected' : 'admitted', ...(r.reason !== undefined ? { reason: r.reason } : {}) })));
      });
    });
  });

  await allArrived;
  Atomics.store(cells, barrierSlot.go, 1);
  Atomics.notify(cells, barrierSlot.go);
  const attempts = (await Promise.all(runs)).flat();
  await ledger.close();
  const log = ledger.events();

  const record: ConcurrencyRecord = {
    description: `${workers} worker threads × ${attemptsPerWorker} attempts, released by a barrier, against a ${kind === 'calls' ? 'call' : 'input-byte'} budget that admits ${admitted}`,
    grantId,
    budget,
    inputBytesPerCall,
    workers,
    attemptsPerWorker,
    expected: { admitted, rejected: workers * attemptsPerWorker - admitted, reason },
    attempts,
    store: { notesBefore: store0.notes, notesAfter: store.size, digestBefore: store0.digest, digestAfter: store.digest() },
    effectCallIds: store.effects.map((e) => e.callId),
  };
  return { record, log };
}

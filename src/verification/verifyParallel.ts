import { jsonLines, lineBoundary, sharedBytes } from './jsonLines';
import { checkLog, duplicateCallMessage, hashProblemMessage, problemRank, verify, type PlacedProblem, type VerifyOptions, type VerifyResult } from './verify';
import { startVerifyThread } from './verifyThread';
import type { WorkerReport } from './workerChecks';

/**
 * `verify` for a long log given as JSON Lines (one event per line, as text or bytes), on two cores:
 * a worker thread checks the shape and hash of the events in the first `workerShare` of the bytes,
 * from shared memory, while this thread parses every line, folds and re-decides, and checks the
 * shape and hash of the rest. The result equals
 * `verify(lines parsed)` (problems in the same order, same `checked`); when the worker finds a
 * malformed event, or cannot start (e.g. running from TypeScript sources), the sequential `verify`
 * runs instead. For a log already in memory as objects use `verify`: copying objects to a worker
 * costs more than hashing them.
 */
export interface VerifyParallelOptions extends VerifyOptions {
  /**
   * Share of the log (by bytes, from the start) whose shape and hash the worker checks; the main
   * thread checks the rest (and then also callId reuse) besides folding everything. Default 0.9:
   * the two threads then finish at about the same time on a 1,000,000-event log (measured at 1,
   * 0.9, 0.8 and 0.7 in docs/performance.md; folding and re-deciding is now the cheaper side).
   */
  readonly workerShare?: number;
}

/** What the worker is given: the log's bytes, where its share ends, and whether to check callId reuse. */
export interface CheckWorkerInput {
  readonly bytes: Uint8Array;
  readonly byteEnd: number;
  readonly duplicates: boolean;
}
/** A started worker: its report (undefined if it failed or exited without one) and a way to stop it. */
export interface CheckWorker {
  readonly report: Promise<WorkerReport | undefined>;
  terminate(): Promise<unknown>;
}

export function verifyParallel(log: string | Uint8Array, options: VerifyParallelOptions = {}): Promise<VerifyResult> {
  return verifyWithWorker(log, options, startVerifyThread);
}

/**
 * verifyParallel with the worker started by `start` (undefined: none could start, so the sequential
 * `verify` runs). The thread itself is verifyThread.ts; tests give a worker that runs the same
 * checks in-process, so everything here is tested without compiled files.
 */
export async function verifyWithWorker(log: string | Uint8Array, options: VerifyParallelOptions, start: (input: CheckWorkerInput) => CheckWorker | undefined): Promise<VerifyResult> {
  // Anything but text or bytes goes to `verify`, which reports what is not a log instead of throwing.
  if (typeof log !== 'string' && !(log instanceof Uint8Array)) return verify(log as unknown as Iterable<unknown>, options);
  const bytes = sharedBytes(log);
  const sequential = (): VerifyResult => verify(jsonLines(bytes), options);
  const share = options.workerShare ?? 0.9;
  if (!(share >= 0 && share <= 1)) throw new RangeError('workerShare must be between 0 and 1');
  // A worker covering the whole log (workerShare 1) also takes the callId-reuse check off this thread.
  const split = share >= 1 ? { lines: Number.POSITIVE_INFINITY, byteEnd: bytes.byteLength } : lineBoundary(bytes, share);
  const whole = split.byteEnd >= bytes.byteLength;
  const worker = start({ bytes, byteEnd: split.byteEnd, duplicates: whole });
  if (worker === undefined) return sequential();
  const report = worker.report;
  const placed: PlacedProblem[] = [];
  let checked: number;
  try {
    // Shape is the worker's: a malformed event can make the fold throw; then the sequential path decides.
    checked = checkLog(jsonLines(bytes), { shapeFrom: split.lines, hashFrom: split.lines, duplicates: !whole }, (p) => placed.push(p));
  } catch {
    await worker.terminate();
    return sequential();
  }
  const fromWorker = await report;
  await worker.terminate();
  if (fromWorker === undefined || fromWorker.malformed) return sequential();
  if (fromWorker.hashMismatches.length > 0 || fromWorker.duplicateCalls.length > 0) {
    const seqs = seqsAt(bytes, [...fromWorker.hashMismatches, ...fromWorker.duplicateCalls]);
    for (const index of fromWorker.hashMismatches) {
      placed.push({ index, rank: problemRank.hash, problem: { seq: seqs.get(index) as number, code: 'hash', message: hashProblemMessage } });
    }
    for (const index of fromWorker.duplicateCalls) {
      placed.push({ index, rank: problemRank.duplicate_call, problem: { seq: seqs.get(index) as number, code: 'duplicate_call', message: duplicateCallMessage } });
    }
  }
  placed.sort((a, b) => a.index - b.index || a.rank - b.rank);
  const problems = placed.slice(0, options.problemsMax ?? 1_000).map((p) => p.problem);
  return { ok: placed.length === 0, checked, problems };
}

/** The `seq` of the events at some indices (only for hash problems, which are rare). */
function seqsAt(bytes: Uint8Array, indices: readonly number[]): Map<number, number> {
  const wanted = new Set(indices);
  const seqs = new Map<number, number>();
  let index = 0;
  for (const raw of jsonLines(bytes)) {
    if (wanted.has(index)) seqs.set(index, (raw as { seq: number }).seq);
    index++;
  }
  return seqs;
}

import { performance } from 'node:perf_hooks';
import { summarize } from '../../src/evidence/summarize';
import { evidenceSchemaVersion, type Evidence } from '../../src/evidence/types';
import { hardwareOf, packageRoot, revisionOf, sourceHashesOf } from './environment';
import { runConcurrency } from './runConcurrency';
import { runRevocation } from './runRevocation';
import { runSequential } from './runSequential';

export interface ReproduceOptions {
  /** Receives one line per stage. */
  readonly onProgress?: (line: string) => void;
}

const stagesTotal = 6;

/** Runs every stage of the experiment and assembles the evidence (nothing is written here). */
export async function reproduce(options: ReproduceOptions = {}): Promise<Evidence> {
  const progress = options.onProgress ?? (() => undefined);
  const started = performance.now();
  let stage = 0;
  const timed = async <T>(label: string, run: () => Promise<T> | T, describe: (result: T) => string): Promise<T> => {
    const t0 = performance.now();
    const result = await run();
    progress(`[${++stage}/${stagesTotal}] ${label}: ${describe(result)} (${Math.round(performance.now() - t0)} ms)`);
    return result;
  };

  const createdAt = new Date().toISOString();
  const environment = await timed(
    'environment',
    () => {
      const root = packageRoot();
      return { revision: revisionOf(root), sourceHashes: sourceHashesOf(root), hardware: hardwareOf() };
    },
    (e) => `commit ${e.revision.commit ?? 'unknown'}${e.revision.dirty === true ? ' (dirty)' : e.revision.dirty === false ? ' (clean)' : ''}, ${Object.keys(e.sourceHashes).length} source files hashed`,
  );
  const sequential = await timed('sequential cases', () => runSequential(Date.now()), (r) => {
    const admitted = r.cases.filter((c) => c.observed.outcome === 'admitted').length;
    return `${r.cases.length} cases, ${admitted} admitted, ${r.cases.length - admitted} rejected`;
  });
  const raceText = (r: Awaited<ReturnType<typeof runConcurrency>>): string => {
    const admitted = r.record.attempts.filter((a) => a.outcome === 'admitted').length;
    return `${r.record.attempts.length} attempts from ${r.record.workers} threads, ${admitted} admitted, ${r.record.attempts.length - admitted} rejected`;
  };
  const calls = await timed('concurrency, call budget', () => runConcurrency('calls'), raceText);
  const bytes = await timed('concurrency, byte budget', () => runConcurrency('bytes'), raceText);
  const revokeText = (r: Awaited<ReturnType<typeof runRevocation>>): string => `${r.record.order.join(' → ')}`;
  const complete = await timed('revocation during execution', () => runRevocation(false), revokeText);
  const abort = await timed('revocation with abortInFlight', () => runRevocation(true), revokeText);

  const logs = { sequential: sequential.log, concurrencyCalls: calls.log, concurrencyBytes: bytes.log, revocation: complete.log, revocationAbort: abort.log };
  const concurrency = { calls: calls.record, bytes: bytes.record };
  const revocation = { complete: complete.record, abort: abort.record };
  const summary = summarize({ cases: sequential.cases, concurrency, revocation, logs });
  return {
    schemaVersion: evidenceSchemaVersion,
    createdAt,
    revision: environment.revision,
    sourceHashes: environment.sourceHashes,
    hardware: environment.hardware,
    durationMs: Math.round(performance.now() - started),
    cases: sequential.cases,
    concurrency,
    revocation,
    summary,
    logs,
  };
}

import { eventHash } from '../domain/chain';
import type { LedgerEvent } from '../domain/events';
import { eventShapeProblem } from './eventShape';
import { jsonLines } from './jsonLines';

export interface WorkerReport {
  /** Some event is malformed: the main thread then runs the sequential `verify` instead. */
  readonly malformed: boolean;
  /** Indices of well-formed events whose hash does not match their content. */
  readonly hashMismatches: readonly number[];
  /** Indices of decisions whose callId an earlier decision already used (when asked to check). */
  readonly duplicateCalls: readonly number[];
}

/**
 * The checks of `verify` that need no folded state, over the events in `bytes[0, byteEnd)`: shape,
 * hash and, when `duplicates` is set (the range is the whole log), reuse of a callId. Runs in
 * verifyParallel's worker thread while the main thread folds and re-decides.
 */
/**
 * Whether the event is the one decision of its callId (an admission, rejection, replay, or a wait for
 * approval, which its approval later admits without a second decision): a second with the same id is
 * `duplicate_call`. One predicate for `verify` and the worker, so both refuse the same logs.
 */
export function decidesCall(event: LedgerEvent): event is Extract<LedgerEvent, { type: 'call.admitted' | 'call.rejected' | 'call.replayed' | 'approval.requested' }> {
  return event.type === 'call.admitted' || event.type === 'call.rejected' || event.type === 'call.replayed' || event.type === 'approval.requested';
}

export function checkShapesAndHashes(bytes: Uint8Array, byteEnd: number, duplicates: boolean): WorkerReport {
  const hashMismatches: number[] = [];
  const duplicateCalls: number[] = [];
  const callIds = new Set<string>();
  let index = 0;
  for (const raw of jsonLines(bytes, byteEnd)) {
    if (eventShapeProblem(raw) !== undefined) return { malformed: true, hashMismatches, duplicateCalls };
    const event = raw as LedgerEvent;
    try {
      if (eventHash(event) !== event.hash) hashMismatches.push(index);
    } catch {
      return { malformed: true, hashMismatches, duplicateCalls }; // let the sequential path raise what `verify` raises
    }
    if (duplicates && decidesCall(event)) {
      if (callIds.has(event.callId)) duplicateCalls.push(index);
      callIds.add(event.callId);
    }
    index++;
  }
  return { malformed: false, hashMismatches, duplicateCalls };
}

import { eventHash } from '../domain/chain';
import { decide } from '../domain/decide';
import { genesisHash, type EventPayload, type LedgerEvent } from '../domain/events';
import { TransientState } from '../domain/transientState';
import { initialState } from '../domain/state';
import { commandFromEvent } from './commandFromEvent';
import { eventShapeProblem } from './eventShape';
import { sameAsDecided } from './sameAsDecided';
import { decidesCall } from './workerChecks';

export type VerifyProblemCode = 'malformed' | 'sequence' | 'chain' | 'hash' | 'decision' | 'duplicate_call';

export interface VerifyProblem {
  readonly seq: number;
  readonly code: VerifyProblemCode;
  readonly message: string;
}

export interface VerifyResult {
  readonly ok: boolean;
  /** Events examined. */
  readonly checked: number;
  readonly problems: readonly VerifyProblem[];
}

export interface VerifyOptions {
  /** Stop collecting after this many problems (the first one is what matters). Default 1,000. */
  readonly problemsMax?: number;
}

/** A problem with where it belongs: the event's index in the log and its check's rank (verify's order). */
export interface PlacedProblem {
  readonly index: number;
  readonly rank: number;
  readonly problem: VerifyProblem;
}

/** Check ranks within one event, in the order `verify` reports them. */
export const problemRank = { malformed: 0, sequence: 1, chain: 2, hash: 3, duplicate_call: 4, decision: 5 } as const;

/**
 * The fold behind `verify`: every check on every event, in order. `verifyParallel` runs it with the
 * shape and hash checks of a prefix left to a worker thread and merges the problems by index and rank.
 * Returns the number of events examined; `report` returning false stops collecting (not checking).
 */
export function checkLog(
  events: Iterable<unknown>,
  /**
   * Shape and hash are checked from these indices on (0: every event; verifyParallel leaves a prefix
   * to its worker); `duplicates: false` leaves the callId-reuse check to the worker too (it then sees the whole log).
   */
  checks: { readonly shapeFrom: number; readonly hashFrom: number; readonly duplicates: boolean },
  report: (placed: PlacedProblem) => void,
): number {
  // One transient fold over the whole log: each trie path is copied once per batch of events
  // (TransientState commits on its own every few thousand) instead of once per event.
  const fold = new TransientState(initialState);
  let expectedSeq = 1;
  let prevHash = genesisHash;
  let index = -1;
  const callIds = new Set<string>();
  const at = (seq: number, code: VerifyProblemCode, message: string): void => report({ index, rank: problemRank[code], problem: { seq, code, message } });
  // Every check on one well-shaped event, then the fold.
  const checkEvent = (event: LedgerEvent): void => {
    if (event.seq !== expectedSeq) at(event.seq, 'sequence', `expected seq ${expectedSeq}, found ${event.seq}`);
    if (event.prevHash !== prevHash) at(event.seq, 'chain', 'prevHash does not match the previous event');
    if (index >= checks.hashFrom && eventHash(event) !== event.hash) at(event.seq, 'hash', hashProblemMessage);

    if (checks.duplicates && decidesCall(event)) {
      if (callIds.has(event.callId)) at(event.seq, 'duplicate_call', duplicateCallMessage);
      callIds.add(event.callId);
    }
    const decision = decide(fold.view, commandFromEvent(event));
    if (!decision.ok) {
      at(event.seq, 'decision', `re-deciding refuses the command: ${decision.code}`);
    } else if (decision.events.length !== 1 || !sameAsDecided(decision.events[0] as EventPayload, event)) {
      const expected = decision.events[0];
      const detail = expected === undefined ? 'no event' : expected.type === 'call.rejected' ? `call.rejected (${expected.reason})` : expected.type;
      at(event.seq, 'decision', `re-deciding yields ${detail}, the log has ${event.type === 'call.rejected' ? `call.rejected (${event.reason})` : event.type}`);
    }
    fold.apply(event);
    prevHash = event.hash;
    expectedSeq = event.seq + 1;
  };
  // The log is untrusted: not iterable, or an iterator that throws, is a problem, never a throw.
  let iterator: Iterator<unknown>;
  try {
    iterator = (events as Iterable<unknown>)[Symbol.iterator]();
  } catch {
    at(0, 'malformed', 'the log is not an iterable of events');
    return 0;
  }
  for (;;) {
    let step: IteratorResult<unknown>;
    try {
      step = iterator.next();
    } catch {
      index++;
      at(expectedSeq, 'malformed', 'the log could not be read past this point');
      return index;
    }
    if (step.done === true) break;
    const raw = step.value;
    index++;
    if (index >= checks.shapeFrom) {
      const shape = eventShapeProblem(raw);
      if (shape !== undefined) {
        const seq: unknown = raw !== null && typeof raw === 'object' ? (raw as { seq?: unknown }).seq : undefined;
        at(Number.isSafeInteger(seq) ? (seq as number) : expectedSeq, 'malformed', `event is malformed: ${shape}`);
        expectedSeq++;
        continue;
      }
    }
    try {
      checkEvent(raw as LedgerEvent);
    } catch {
      // Well shaped but not checkable (e.g. nested deeper than any writer nests): malformed, not a throw.
      at(expectedSeq, 'malformed', 'event cannot be checked: its JSON nests too deep or holds values no canonical writer produces');
      expectedSeq++;
    }
  }
  return index + 1;
}

export const hashProblemMessage = 'hash does not match the event content';
export const duplicateCallMessage = 'callId already decided earlier in the log';

/**
 * Checks a log end to end: sequence numbers, the hash chain, each event's hash, and that `decide`,
 * re-run on the state folded so far, yields exactly the logged event for every command it can
 * re-derive. Any edited, dropped, inserted or reordered event makes `ok` false.
 */
export function verify(events: Iterable<unknown>, options: VerifyOptions = {}): VerifyResult {
  const problemsMax = options.problemsMax ?? 1_000;
  const problems: VerifyProblem[] = [];
  // `ok` counts every problem found, not only those collected: problemsMax 0 must not pass a broken log.
  let found = 0;
  const checked = checkLog(events, { shapeFrom: 0, hashFrom: 0, duplicates: true }, ({ problem }) => {
    found++;
    if (problems.length < problemsMax) problems.push(problem);
  });
  return { ok: found === 0, checked, problems };
}

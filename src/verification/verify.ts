import { canonicalJson } from '../domain/canonicalJson';
import { eventHash } from '../domain/chain';
import { decide } from '../domain/decide';
import { genesisHash, type LedgerEvent } from '../domain/events';
import { evolve } from '../domain/evolve';
import { initialState } from '../domain/state';
import { commandFromEvent } from './commandFromEvent';
import { eventShapeProblem } from './eventShape';

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

function payloadOf(event: LedgerEvent): string {
  const { seq: _s, at: _a, prevHash: _p, hash: _h, ...payload } = event;
  return canonicalJson(payload);
}

/**
 * Checks a log end to end: sequence numbers, the hash chain, each event's hash, and that `decide`,
 * re-run on the state folded so far, yields exactly the logged event for every command it can
 * re-derive. Any edited, dropped, inserted or reordered event makes `ok` false.
 */
export function verify(events: Iterable<unknown>, options: VerifyOptions = {}): VerifyResult {
  const problemsMax = options.problemsMax ?? 1_000;
  const problems: VerifyProblem[] = [];
  const report = (seq: number, code: VerifyProblemCode, message: string): void => {
    if (problems.length < problemsMax) problems.push({ seq, code, message });
  };
  let state = initialState;
  let expectedSeq = 1;
  let prevHash = genesisHash;
  let checked = 0;
  const callIds = new Set<string>();
  for (const raw of events) {
    checked++;
    const shape = eventShapeProblem(raw);
    const seqGuess = typeof (raw as { seq?: unknown })?.seq === 'number' ? (raw as { seq: number }).seq : expectedSeq;
    if (shape !== undefined) {
      report(seqGuess, 'malformed', `event is malformed: ${shape}`);
      expectedSeq++;
      continue;
    }
    const event = raw as LedgerEvent;
    if (event.seq !== expectedSeq) report(event.seq, 'sequence', `expected seq ${expectedSeq}, found ${event.seq}`);
    if (event.prevHash !== prevHash) report(event.seq, 'chain', 'prevHash does not match the previous event');
    if (eventHash(event) !== event.hash) report(event.seq, 'hash', 'hash does not match the event content');

    if ((event.type === 'call.admitted' || event.type === 'call.rejected')) {
      if (callIds.has(event.callId)) report(event.seq, 'duplicate_call', 'callId already decided earlier in the log');
      callIds.add(event.callId);
    }
    const decision = decide(state, commandFromEvent(event));
    if (!decision.ok) {
      report(event.seq, 'decision', `re-deciding refuses the command: ${decision.code}`);
    } else if (decision.events.length !== 1 || canonicalJson(decision.events[0]) !== payloadOf(event)) {
      const expected = decision.events[0];
      const detail = expected === undefined ? 'no event' : expected.type === 'call.rejected' ? `call.rejected (${expected.reason})` : expected.type;
      report(event.seq, 'decision', `re-deciding yields ${detail}, the log has ${event.type === 'call.rejected' ? `call.rejected (${event.reason})` : event.type}`);
    }
    state = evolve(state, event);
    prevHash = event.hash;
    expectedSeq = event.seq + 1;
  }
  return { ok: problems.length === 0, checked, problems };
}

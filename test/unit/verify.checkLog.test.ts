import type { LedgerEvent } from '../../src';
import { checkLog, type PlacedProblem } from '../../src/verification/verify';
import { admit, given, issueCommand, registerNotes } from '../support/given';

// checkLog with a prefix left to verifyParallel's worker: shape, hash and callId-reuse checks are
// skipped there, sequence, chain and decision are not. (verifyParallel's own tests run it from dist/.)

function placed(events: readonly unknown[], checks: { shapeFrom: number; hashFrom: number; duplicates: boolean }): PlacedProblem[] {
  const out: PlacedProblem[] = [];
  checkLog(events, checks, (p) => void out.push(p));
  return out;
}

const all = { shapeFrom: 0, hashFrom: 0, duplicates: true };

it('leaves the hash of events before hashFrom unchecked and checks it from there on', () => {
  const log = given(registerNotes, issueCommand(), admit()).events;
  const edited = [log[0], log[1], { ...(log[2] as LedgerEvent), at: (log[2] as LedgerEvent).at + 1 }];
  expect(placed(edited, { ...all, hashFrom: 3 })).toEqual([]);
  expect(placed(edited, { ...all, hashFrom: 2 })).toEqual([{ index: 2, rank: 3, problem: expect.objectContaining({ seq: 3, code: 'hash' }) }]);
});

it('leaves the shape of events before shapeFrom unchecked and checks it from there on', () => {
  const log = given(registerNotes, issueCommand(), admit()).events;
  // An extra key: malformed, but foldable, so skipping the shape check leaves only the hash problem.
  const edited = [log[0], log[1], { ...(log[2] as LedgerEvent), extra: 1 }];
  expect(placed(edited, { ...all, shapeFrom: 3, hashFrom: 3 })).toEqual([]);
  expect(placed(edited, { ...all, shapeFrom: 2, hashFrom: 3 }).map((p) => [p.index, p.problem.code])).toEqual([[2, 'malformed']]);
});

it('leaves callId reuse to the worker when duplicates is false', () => {
  const log = given(registerNotes, issueCommand(), admit(), admit({ grantId: undefined })).events;
  expect(placed(log, { ...all, duplicates: false })).toEqual([]);
  expect(placed(log, all).map((p) => [p.index, p.rank, p.problem.code])).toEqual([[3, 4, 'duplicate_call']]);
});

it('places each problem at its event index with its rank', () => {
  const log = given(registerNotes, issueCommand(), admit()).events;
  const edited = [null, log[1], { ...(log[2] as LedgerEvent), seq: 9 }];
  expect(placed(edited, all).map((p) => [p.index, p.rank, p.problem.code])).toEqual([[0, 0, 'malformed'], [1, 2, 'chain'], [1, 5, 'decision'], [2, 1, 'sequence'], [2, 3, 'hash'], [2, 5, 'decision']]);
});

it('returns the number of events examined', () => {
  const log = given(registerNotes, issueCommand(), admit()).events;
  expect(checkLog(log, all, () => undefined)).toBe(3);
  expect(checkLog([], all, () => undefined)).toBe(0);
});

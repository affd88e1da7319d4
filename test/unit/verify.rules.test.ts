import { genesisHash, type LedgerEvent } from '../../src/domain/events';
import { verify } from '../../src/verification/verify';
import { duplicateCallMessage, hashProblemMessage } from '../../src/verification/verify';
import { admit, given, issueCommand, registerNotes, T0 } from '../support/given';
import { rehash, reseal } from '../support/sealedLog';

// One rule of `verify` per test; each log is built inside its test (pure decide/evolve), so a
// mutation run knows exactly which tests reach which check.

const issuedAndAdmitted = (): LedgerEvent[] => given(registerNotes, issueCommand(), admit()).events;

describe('verify: the hash chain', () => {
  it('reports chain when an event, re-hashed, names another prevHash', () => {
    const log = issuedAndAdmitted();
    const last = log[2] as LedgerEvent;
    log[2] = rehash({ ...last, prevHash: (log[0] as LedgerEvent).hash });
    expect(verify(log).problems).toEqual([{ seq: 3, code: 'chain', message: 'prevHash does not match the previous event' }]);
  });

  it('reports chain when the first event does not start from the genesis hash', () => {
    const log = issuedAndAdmitted();
    log[0] = rehash({ ...(log[0] as LedgerEvent), prevHash: 'f'.repeat(64) });
    // The second event still names the first event's old hash, so it breaks the chain too.
    expect(verify(log).problems.map((p) => [p.seq, p.code])).toEqual([[1, 'chain'], [2, 'chain']]);
  });

  it('accepts a chain that starts from the genesis hash and links every event', () => {
    const log = issuedAndAdmitted();
    expect(log[0]?.prevHash).toBe(genesisHash);
    expect(verify(log)).toEqual({ ok: true, checked: 3, problems: [] });
  });

  it('reports hash, and only hash, when one event is edited without re-hashing', () => {
    const log = issuedAndAdmitted();
    log[2] = { ...(log[2] as LedgerEvent), at: T0 + 2 } as LedgerEvent;
    // The next event would name the stored hash, so the chain after an edit is not broken: hash alone says it.
    expect(verify(log).problems).toEqual([{ seq: 3, code: 'hash', message: hashProblemMessage }]);
  });
});

describe('verify: sequence numbers', () => {
  it('reports sequence with the expected and the found number', () => {
    const log = issuedAndAdmitted();
    log[2] = rehash({ ...(log[2] as LedgerEvent), seq: 7 });
    expect(verify(log).problems).toEqual([{ seq: 7, code: 'sequence', message: 'expected seq 3, found 7' }]);
  });

  it('expects the number after the found one once a sequence problem is reported', () => {
    const log = reseal(given(registerNotes, issueCommand(), admit(), admit({ callId: 'c2' })).events);
    log[2] = rehash({ ...(log[2] as LedgerEvent), seq: 7 });
    log[3] = rehash({ ...(log[3] as LedgerEvent), seq: 8, prevHash: (log[2] as LedgerEvent).hash });
    // Event 4 follows 7 as 8: one gap, reported once.
    expect(verify(log).problems.map((p) => [p.seq, p.code])).toEqual([[7, 'sequence']]);
  });

  it('reports a malformed event under its own seq when it has a numeric one', () => {
    const log: unknown[] = issuedAndAdmitted();
    log[1] = { seq: 2, type: 'grant.issued' };
    expect(verify(log).problems[0]).toMatchObject({ seq: 2, code: 'malformed' });
  });

  it('reports a malformed event without a numeric seq under the expected one, and counts it', () => {
    const log: unknown[] = issuedAndAdmitted();
    log[1] = { seq: 'two', type: 'grant.issued' };
    const { problems } = verify(log);
    expect(problems[0]).toMatchObject({ seq: 2, code: 'malformed' });
    // The malformed event took seq 2, so the third event is in sequence (its decision fails: no grant).
    expect(problems.map((p) => p.code)).not.toContain('sequence');
  });

  it('names the failing field in a malformed event message', () => {
    const log: unknown[] = issuedAndAdmitted();
    log[2] = { ...(log[2] as LedgerEvent), reserved: { calls: -1, inputBytes: 10 } };
    expect(verify(log).problems[0]).toEqual({ seq: 3, code: 'malformed', message: 'event is malformed: /reserved/calls must be >= 0' });
  });
});

describe('verify: a callId is decided once', () => {
  it('reports duplicate_call for an admission reusing a settled callId, which decide alone would admit', () => {
    const log = given(registerNotes, issueCommand(), admit(), { type: 'settle', at: T0 + 1, callId: 'c1', outcome: 'completed', refund: false }, admit({ at: T0 + 2 })).events;
    expect(verify(log).problems).toEqual([{ seq: 5, code: 'duplicate_call', message: duplicateCallMessage }]);
  });

  it('reports duplicate_call for a rejection reusing an admitted callId', () => {
    const log = given(registerNotes, issueCommand(), admit(), admit({ grantId: undefined })).events;
    expect(verify(log).problems).toEqual([{ seq: 4, code: 'duplicate_call', message: duplicateCallMessage }]);
  });

  it('reports duplicate_call for an admission reusing a rejected callId', () => {
    const log = given(registerNotes, issueCommand(), admit({ grantId: undefined }), admit()).events;
    expect(verify(log).problems).toEqual([{ seq: 4, code: 'duplicate_call', message: duplicateCallMessage }]);
  });

  it('does not count a settlement as a second decision of its callId', () => {
    const log = given(registerNotes, issueCommand(), admit(), { type: 'settle', at: T0 + 1, callId: 'c1', outcome: 'failed', refund: true }).events;
    expect(verify(log).ok).toBe(true);
  });
});

describe('verify: a grant is issued once', () => {
  it('reports decision for a second grant.issued with the same grant id, re-sealed', () => {
    const log = given(registerNotes, issueCommand()).events;
    const first = log[1] as Extract<LedgerEvent, { type: 'grant.issued' }>;
    const forged = reseal([...log, { ...first, tokenDigest: 'b'.repeat(64) }]);
    expect(verify(forged).problems).toEqual([{ seq: 3, code: 'decision', message: 're-deciding refuses the command: duplicate_grant' }]);
  });

  it('reports decision for a second grant.issued with the same token digest, re-sealed', () => {
    const log = given(registerNotes, issueCommand()).events;
    const first = log[1] as Extract<LedgerEvent, { type: 'grant.issued' }>;
    const forged = reseal([...log, { ...first, grantId: 'g2' }]);
    expect(verify(forged).problems).toEqual([{ seq: 3, code: 'decision', message: 're-deciding refuses the command: duplicate_grant' }]);
  });
});

describe('verify: re-derived decisions', () => {
  it('names the re-derived and the logged outcome when they differ', () => {
    const log = given(registerNotes, issueCommand(), admit({ at: T0 + 60_000 })).events;
    const rejected = log[2] as Extract<LedgerEvent, { type: 'call.rejected' }>;
    const forged = reseal([...log.slice(0, 2), { ...rejected, reason: 'call_budget_exhausted' }]);
    expect(verify(forged).problems).toEqual([{ seq: 3, code: 'decision', message: 're-deciding yields call.rejected (expired), the log has call.rejected (call_budget_exhausted)' }]);
  });

  it('names the re-derived rejection when the log has an admission', () => {
    const log = given(registerNotes, issueCommand(), admit()).events;
    const grant = log[1] as Extract<LedgerEvent, { type: 'grant.issued' }>;
    const forged = reseal([log[0] as LedgerEvent, { ...grant, scope: { ...grant.scope, budget: { calls: 0, inputBytes: 100 } } }, log[2] as LedgerEvent]);
    expect(verify(forged).problems).toEqual([{ seq: 3, code: 'decision', message: 're-deciding yields call.rejected (call_budget_exhausted), the log has call.admitted' }]);
  });

  it('names the re-derived admission when the log has a rejection', () => {
    const log = given(registerNotes, issueCommand(), admit()).events;
    const admitted = log[2] as Extract<LedgerEvent, { type: 'call.admitted' }>;
    const forged = reseal([...log.slice(0, 2), { type: 'call.rejected', seq: 3, at: admitted.at, prevHash: '', hash: '', callId: 'c1', grantId: 'g1', tool: 'notes.write', reason: 'expired', inputBytes: 10 }]);
    expect(verify(forged).problems).toEqual([{ seq: 3, code: 'decision', message: 're-deciding yields call.admitted, the log has call.rejected (expired)' }]);
  });

  it('reports decision, naming no event, for a re-registration that decide would not log', () => {
    const log = given(registerNotes).events;
    const forged = reseal([...log, log[0] as LedgerEvent]);
    expect(verify(forged).problems).toEqual([{ seq: 2, code: 'decision', message: 're-deciding yields no event, the log has tool.registered' }]);
  });
});

describe('verify: the result', () => {
  it('stops collecting at problemsMax but still counts every event', () => {
    const result = verify([null, null, null], { problemsMax: 2 });
    expect(result).toMatchObject({ ok: false, checked: 3 });
    expect(result.problems).toHaveLength(2);
  });

  it('collects at most 1,000 problems by default', () => {
    expect(verify(new Array<null>(1_001).fill(null)).problems).toHaveLength(1_000);
  });

  it('is not ok when every problem found is beyond problemsMax', () => {
    expect(verify([null], { problemsMax: 0 })).toEqual({ ok: false, checked: 1, problems: [] });
  });

  it('reports the problems of one event in rank order: sequence, chain, hash', () => {
    const log = issuedAndAdmitted();
    log[2] = { ...(log[2] as LedgerEvent), seq: 9, prevHash: 'e'.repeat(64) } as LedgerEvent;
    expect(verify(log).problems.map((p) => p.code)).toEqual(['sequence', 'chain', 'hash']);
  });
});

describe('verify: a log that cannot be read or checked', () => {
  it('reports a value that is not iterable as malformed at seq 0', () => {
    expect(verify(42 as unknown as Iterable<unknown>)).toEqual({ ok: false, checked: 0, problems: [{ seq: 0, code: 'malformed', message: 'the log is not an iterable of events' }] });
  });

  it('reports an iterator that throws as malformed at the next seq, counting the events read before it', () => {
    const events = issuedAndAdmitted();
    function* breaking(): Generator<unknown> {
      yield events[0];
      yield events[1];
      throw new Error('disk gone');
    }
    expect(verify(breaking())).toEqual({ ok: false, checked: 2, problems: [{ seq: 3, code: 'malformed', message: 'the log could not be read past this point' }] });
  });

  it('reports a malformed event under its own numeric seq, not the expected one', () => {
    const log: unknown[] = issuedAndAdmitted();
    log[1] = { seq: 9, type: 'grant.issued' };
    expect(verify(log).problems[0]).toMatchObject({ seq: 9, code: 'malformed' });
  });

  it('reports a malformed value that is not an object under the expected seq, whatever seq it carries', () => {
    const log: unknown[] = issuedAndAdmitted();
    log[1] = Object.assign(() => undefined, { seq: 9 });
    expect(verify(log).problems[0]).toMatchObject({ seq: 2, code: 'malformed' });
  });

  it('reports a well-shaped event that cannot be hashed (a number JSON reads as Infinity) as malformed, and expects the next seq after it', () => {
    const text = issuedAndAdmitted().map((e) => JSON.stringify(e)).join('\n').replace('"type":"object"', '"type":"object","x":1e400');
    const result = verify(text.split('\n').map((line) => JSON.parse(line) as unknown));
    expect(result.problems[0]).toEqual({ seq: 1, code: 'malformed', message: 'event cannot be checked: its JSON nests too deep or holds values no canonical writer produces' });
    expect(result.problems.filter((p) => p.code === 'sequence')).toEqual([]);
  });
});

describe('verify: a replay is a decision of its callId', () => {
  it('reports duplicate_call for a replay reusing a settled callId', () => {
    const key = { keyDigest: 'c'.repeat(64), argsDigest: 'b'.repeat(64), expiresAt: T0 + 50_000, keysMax: 10 };
    const log = given(registerNotes, issueCommand(), admit({ idempotency: key }), { type: 'settle', at: T0 + 1, callId: 'c1', outcome: 'completed', refund: false }, admit({ idempotency: key, at: T0 + 2 })).events;
    expect(log[4]?.type).toBe('call.replayed');
    expect(verify(log).problems).toEqual([{ seq: 5, code: 'duplicate_call', message: duplicateCallMessage }]);
  });
});

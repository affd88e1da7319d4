import { eventHash, type LedgerEvent } from '../../src';
import { reproduce } from '../../experiments/reproduce/reproduce';
import { verifyEvidence, type EvidenceProblem } from '../../src/evidence/verifyEvidence';
import type { Evidence, LogName } from '../../src/evidence/types';

type Mutable<T> = { -readonly [K in keyof T]: T[K] extends object ? Mutable<T[K]> : T[K] };
type Doc = Mutable<Omit<Evidence, 'logs'>> & { logs: Record<LogName, LedgerEvent[]> };

let original: Evidence;
beforeAll(async () => {
  original = await reproduce();
});

/** A deep copy to edit: the evidence exactly as a reader would load it from the file. */
const copy = (): Doc => JSON.parse(JSON.stringify(original)) as Doc;

const problemsOf = (doc: unknown): readonly EvidenceProblem[] => {
  const report = verifyEvidence(doc);
  expect(report.ok).toBe(report.problems.length === 0);
  return report.problems;
};

/** Re-seals events from index `from` on, so that a forged edit also carries a valid hash chain. */
function reseal(events: LedgerEvent[], from: number): void {
  for (let i = from; i < events.length; i++) {
    const prevHash = i === 0 ? '0'.repeat(64) : (events[i - 1] as LedgerEvent).hash;
    const base = { ...(events[i] as LedgerEvent), seq: i + 1, prevHash };
    events[i] = { ...base, hash: eventHash(base) } as LedgerEvent;
  }
}

const firstIndex = (events: readonly LedgerEvent[], type: LedgerEvent['type']): number => {
  const i = events.findIndex((e) => e.type === type);
  if (i < 0) throw new Error(`the log has no ${type}`);
  return i;
};

describe('atc verify on evidence files', () => {
  it('accepts the untouched evidence and recomputes the published claims', () => {
    const report = verifyEvidence(copy());
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.recomputed).toEqual(original.summary);
    expect(report.checks.length).toBeGreaterThanOrEqual(10);
  });

  it("catches a changed observed outcome, naming the case and its decision's seq", () => {
    const doc = copy();
    const c = doc.cases[5] as Doc['cases'][number];
    c.observed = { callId: c.observed.callId, outcome: 'admitted', status: 'completed' };
    const decision = doc.logs.sequential.find((e) => (e as { callId?: string }).callId === c.observed.callId) as LedgerEvent;
    expect(problemsOf(doc)).toContainEqual(expect.objectContaining({ where: `cases[5] ${c.name}`, seq: decision.seq }));
  });

  it('catches an edited event field through its hash, with the seq', () => {
    const doc = copy();
    const i = firstIndex(doc.logs.concurrencyCalls, 'call.rejected');
    doc.logs.concurrencyCalls[i] = { ...(doc.logs.concurrencyCalls[i] as LedgerEvent), reason: 'revoked' } as LedgerEvent;
    expect(problemsOf(doc)).toContainEqual(expect.objectContaining({ where: 'logs.concurrencyCalls', seq: i + 1, message: expect.stringMatching(/^hash:/) }));
  });

  it('catches a forged eighth admission even when the whole chain is re-sealed, by re-deciding it', () => {
    const doc = copy();
    const log = doc.logs.concurrencyCalls;
    const i = firstIndex(log, 'call.rejected');
    const rejected = log[i] as Extract<LedgerEvent, { type: 'call.rejected' }>;
    const { reason: _r, inputBytes, ...rest } = rejected;
    log[i] = { ...rest, type: 'call.admitted', grantId: rejected.grantId as string, reserved: { calls: 1, inputBytes: inputBytes ?? 0 } } as LedgerEvent;
    reseal(log, i);
    const problems = problemsOf(doc);
    expect(problems).toContainEqual(expect.objectContaining({ where: 'logs.concurrencyCalls', seq: i + 1, message: expect.stringMatching(/^decision:/) }));
    expect(problems.some((p) => p.where === 'claims')).toBe(true);
  });

  it('catches a dropped event', () => {
    const doc = copy();
    const i = firstIndex(doc.logs.sequential, 'call.completed');
    doc.logs.sequential.splice(i, 1);
    expect(problemsOf(doc)).toContainEqual(expect.objectContaining({ where: 'logs.sequential', seq: i + 2 }));
  });

  it('catches reordered events', () => {
    const doc = copy();
    const log = doc.logs.revocation;
    const i = firstIndex(log, 'grant.revoked');
    [log[i], log[i + 1]] = [log[i + 1] as LedgerEvent, log[i] as LedgerEvent];
    const problems = problemsOf(doc);
    expect(problems).toContainEqual(expect.objectContaining({ where: 'logs.revocation', seq: i + 2 }));
    expect(problems.some((p) => p.where === 'revocation.complete')).toBe(true);
  });

  it('catches a changed summary, which must equal the one recomputed from the logs', () => {
    const doc = copy();
    doc.summary.concurrencyBytes.admitted = 8;
    expect(problemsOf(doc)).toEqual([expect.objectContaining({ where: 'summary', message: expect.stringContaining('byte budget') })]);
  });

  it("catches a changed claim: a case's expected outcome that differs from the case table", () => {
    const doc = copy();
    (doc.cases[3] as Doc['cases'][number]).expected = { outcome: 'rejected', reason: 'expired' };
    expect(problemsOf(doc).map((p) => p.where)).toContain(`cases[3] ${(doc.cases[3] as Doc['cases'][number]).name}`);
  });

  it('catches a changed revocation order claim', () => {
    const doc = copy();
    doc.revocation.complete.order = ['call.admitted', 'call.completed', 'grant.revoked', 'call.rejected'];
    expect(problemsOf(doc)).toContainEqual(expect.objectContaining({ where: 'revocation.complete' }));
  });

  it('catches a rejected case whose store digest changed, and the 0/26 claim it breaks', () => {
    const doc = copy();
    const c = doc.cases.find((x) => x.kind === 'adversarial') as Doc['cases'][number];
    c.storeDigestAfter = 'f'.repeat(64);
    const wheres = problemsOf(doc).map((p) => p.where);
    expect(wheres).toEqual(expect.arrayContaining([`cases[3] ${c.name}`, 'summary', 'claims']));
  });

  it('catches store effects that no longer match the admissions one for one', () => {
    const doc = copy();
    doc.concurrency.bytes.effectCallIds.pop();
    expect(problemsOf(doc)).toContainEqual(expect.objectContaining({ where: 'concurrency.bytes', message: expect.stringContaining('one for one') }));
  });

  it('catches an attempt record that disagrees with the log', () => {
    const doc = copy();
    const attempt = doc.concurrency.calls.attempts.find((a) => a.outcome === 'rejected') as Doc['concurrency']['calls']['attempts'][number];
    attempt.outcome = 'admitted';
    delete attempt.reason;
    expect(problemsOf(doc)).toContainEqual(expect.objectContaining({ where: 'concurrency.calls', seq: expect.any(Number) }));
  });

  it('catches a concurrency record that claims another thread layout or budget', () => {
    const doc = copy();
    doc.concurrency.bytes.workers = 4;
    doc.concurrency.bytes.attemptsPerWorker = 16;
    doc.concurrency.calls.budget.calls = 8;
    const problems = problemsOf(doc);
    expect(problems).toContainEqual(expect.objectContaining({ where: 'concurrency.bytes', message: expect.stringContaining('8 threads × 8 attempts') }));
    expect(problems).toContainEqual(expect.objectContaining({ where: 'concurrency.calls', message: expect.stringContaining('call budget race') }));
  });

  it.each([
    ['an unknown schema version', (d: Doc) => void (d.schemaVersion = 99), 'schemaVersion'],
    ['a commit that is not 40 hex', (d: Doc) => void (d.revision.commit = 'abc123'), 'shape'],
    ['a source hash that is not SHA-256 hex', (d: Doc) => void (d.sourceHashes['src/index.ts'] = 'nope'), 'shape'],
    ['a source path that climbs out of the package', (d: Doc) => void (d.sourceHashes['../etc/passwd'] = 'a'.repeat(64)), 'shape'],
    ['a field the schema does not know', (d: Doc) => void ((d as unknown as Record<string, unknown>).note = 'trust me'), 'shape'],
    ['a missing log', (d: Doc) => void delete (d.logs as Partial<Doc['logs']>).revocationAbort, 'shape'],
  ])('catches %s', (_what, edit, where) => {
    const doc = copy();
    edit(doc);
    expect(problemsOf(doc).map((p) => p.where)).toContain(where);
  });
});

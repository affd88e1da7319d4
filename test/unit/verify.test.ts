import { eventHash, replay, verify, type LedgerEvent } from '../../src';
import { manualClock, notesLedger } from '../support/fixtures';

/** A real log with admissions, rejections, a failure, a revocation and completions. */
async function sampleLog(): Promise<readonly LedgerEvent[]> {
  const clock = manualClock();
  const { ledger } = await notesLedger({ clock: clock.now });
  const { token, grantId } = await ledger.issue({ tools: ['notes.write', 'notes.read'], resources: ['notes:/drafts/'], expiresAt: clock.now() + 10_000, budget: { calls: 4, inputBytes: 400 } });
  await ledger.invoke(token, 'notes.write', { path: 'drafts/a', text: 'one' });
  await ledger.invoke(token, 'notes.read', { path: 'drafts/a' });
  await ledger.invoke(token, 'notes.write', { path: 'secrets/a', text: 'x' });
  await ledger.invoke('atc_wrong', 'notes.write', { path: 'drafts/a', text: 'x' });
  clock.advance(20_000);
  await ledger.invoke(token, 'notes.write', { path: 'drafts/b', text: 'late' });
  await ledger.revoke(grantId);
  await ledger.invoke(token, 'notes.write', { path: 'drafts/b', text: 'x' });
  const events = ledger.events();
  await ledger.close();
  return events;
}

/** Re-seals events from index `from` on, so that a forged edit also carries a valid chain. */
function reseal(events: LedgerEvent[], from: number): LedgerEvent[] {
  const out = events.slice();
  for (let i = from; i < out.length; i++) {
    const prevHash = i === 0 ? '0'.repeat(64) : (out[i - 1] as LedgerEvent).hash;
    const base = { ...(out[i] as LedgerEvent), seq: i + 1, prevHash };
    out[i] = { ...base, hash: eventHash(base) } as LedgerEvent;
  }
  return out;
}

const indexOf = (events: readonly LedgerEvent[], predicate: (e: LedgerEvent) => boolean): number => {
  const i = events.findIndex(predicate);
  if (i < 0) throw new Error('sample log lacks the event the test edits');
  return i;
};

describe('verify', () => {
  let log: LedgerEvent[];
  beforeAll(async () => {
    log = [...(await sampleLog())];
  });

  it('accepts an untouched log and re-derives every decision', () => {
    const result = verify(log);
    expect(result).toEqual({ ok: true, checked: log.length, problems: [] });
    expect(log.map((e) => e.type)).toEqual(expect.arrayContaining(['call.admitted', 'call.rejected', 'call.completed', 'grant.revoked']));
  });

  it('catches an edited field through the hash', () => {
    const i = indexOf(log, (e) => e.type === 'call.admitted');
    const edited = log.slice();
    edited[i] = { ...(log[i] as LedgerEvent), tool: 'notes.read' } as LedgerEvent;
    expect(verify(edited).problems).toContainEqual(expect.objectContaining({ seq: i + 1, code: 'hash' }));
  });

  it('catches a dropped event through sequence and chain', () => {
    const dropped = [...log.slice(0, 3), ...log.slice(4)];
    const result = verify(dropped);
    expect(result.ok).toBe(false);
    expect(result.problems[0]).toMatchObject({ seq: 5, code: 'sequence' });
  });

  it('catches an inserted event', () => {
    const inserted = [...log.slice(0, 4), log[3] as LedgerEvent, ...log.slice(4)];
    expect(verify(inserted).ok).toBe(false);
  });

  it('catches two events swapped', () => {
    const swapped = log.slice();
    [swapped[4], swapped[5]] = [swapped[5] as LedgerEvent, swapped[4] as LedgerEvent];
    expect(verify(swapped).ok).toBe(false);
  });

  it('catches a forged decision even when the forger re-hashes the whole chain', () => {
    // Turn the expired rejection into an admission and re-seal: the chain is valid, the decision is not.
    const i = indexOf(log, (e) => e.type === 'call.rejected' && e.reason === 'expired');
    const rejectedEvent = log[i] as Extract<LedgerEvent, { type: 'call.rejected' }>;
    const forged = log.slice();
    const { reason: _r, inputBytes, ...rest } = rejectedEvent;
    forged[i] = { ...rest, type: 'call.admitted', grantId: rejectedEvent.grantId as string, reserved: { calls: 1, inputBytes: inputBytes ?? 0 } } as LedgerEvent;
    const result = verify(reseal(forged, i));
    expect(result.problems).toContainEqual(expect.objectContaining({ seq: i + 1, code: 'decision' }));
  });

  it('catches a forged budget: an admission beyond the limit, re-sealed', () => {
    const grant = log.find((e) => e.type === 'grant.issued') as Extract<LedgerEvent, { type: 'grant.issued' }>;
    const i = log.indexOf(grant);
    const forged = log.slice();
    forged[i] = { ...grant, scope: { ...grant.scope, budget: { calls: 0, inputBytes: 400 } } } as LedgerEvent;
    expect(verify(reseal(forged, i)).problems).toContainEqual(expect.objectContaining({ code: 'decision' }));
  });

  it('catches a changed rejection reason, re-sealed', () => {
    const i = indexOf(log, (e) => e.type === 'call.rejected' && e.reason === 'resource_not_permitted');
    const forged = log.slice();
    forged[i] = { ...(log[i] as LedgerEvent), reason: 'call_budget_exhausted' } as LedgerEvent;
    expect(verify(reseal(forged, i)).problems).toContainEqual(expect.objectContaining({ seq: i + 1, code: 'decision' }));
  });

  it('reports a malformed event instead of throwing', () => {
    const broken = [...log.slice(0, 2), { seq: 3, type: 'call.admitted' } as unknown as LedgerEvent, ...log.slice(3)];
    expect(verify(broken).problems).toContainEqual(expect.objectContaining({ seq: 3, code: 'malformed' }));
    expect(verify([null, 42, 'x']).problems).toHaveLength(3);
  });

  it('catches a completion for a call that was never admitted', () => {
    const i = indexOf(log, (e) => e.type === 'call.completed');
    const forged = log.slice();
    forged[i] = { ...(log[i] as LedgerEvent), callId: 'c_forged' } as LedgerEvent;
    expect(verify(reseal(forged, i)).problems).toContainEqual(expect.objectContaining({ seq: i + 1, code: 'decision' }));
  });

  it('catches an admission that reserves more than one call, re-sealed', () => {
    const i = indexOf(log, (e) => e.type === 'call.admitted');
    const forged = log.slice();
    const admitted = log[i] as LedgerEvent & { reserved: { calls: number; inputBytes: number } };
    forged[i] = { ...admitted, reserved: { ...admitted.reserved, calls: 2 } } as LedgerEvent;
    expect(verify(reseal(forged, i)).problems).toContainEqual(expect.objectContaining({ seq: i + 1, code: 'decision' }));
  });

  it('catches a completion that names another tool, re-sealed', () => {
    const i = indexOf(log, (e) => e.type === 'call.completed');
    const forged = log.slice();
    forged[i] = { ...(log[i] as LedgerEvent), tool: 'other.tool' } as LedgerEvent;
    expect(verify(reseal(forged, i)).problems).toContainEqual(expect.objectContaining({ seq: i + 1, code: 'decision' }));
  });

  it('reports a hash that is not 64 lowercase hex digits as malformed', () => {
    for (const hash of [(log[0] as LedgerEvent).hash.toUpperCase(), (log[0] as LedgerEvent).hash.slice(1), `${(log[0] as LedgerEvent).hash.slice(1)}\u00e9`, `${(log[0] as LedgerEvent).hash.slice(1)}g`]) {
      const broken = [{ ...(log[0] as LedgerEvent), hash }, ...log.slice(1)];
      expect(verify(broken).problems[0]).toEqual(expect.objectContaining({ seq: 1, code: 'malformed' }));
    }
  });

  it('accepts the empty log', () => {
    expect(verify([])).toEqual({ ok: true, checked: 0, problems: [] });
  });

  it('folds the same state as the ledger held', async () => {
    expect(replay(log).head).toEqual({ seq: log.length, hash: (log.at(-1) as LedgerEvent).hash });
  });
});

import * as path from 'node:path';
import { eventHash, verify, type LedgerEvent, type verifyParallel as verifyParallelFn } from '../../src';
import { manualClock, notesLedger } from '../support/fixtures';

// verifyParallel's worker needs compiled JS: it comes from dist/ (built by `pretest`).
const dist = require(path.resolve(__dirname, '..', '../dist/src/index.js')) as { verifyParallel: typeof verifyParallelFn };
const jsonl = (events: readonly unknown[]): string => events.map((e) => JSON.stringify(e)).join('\n') + '\n';

// Forgeries of a delegation log that carry a valid hash chain (re-sealed after the edit): verify
// must catch them by re-deciding, not by hashes.

/** root (calls: 3) → mid (calls: 2) → leaf (notes.read only) → reader; a sibling (calls: 2) under root; three calls spend root's budget. */
async function delegationLog() {
  const clock = manualClock();
  const { ledger } = await notesLedger({ clock: clock.now });
  const root = await ledger.issue({ tools: ['notes.write', 'notes.read'], resources: ['notes:/drafts/'], expiresAt: clock.now() + 60_000, budget: { calls: 3, inputBytes: 1_000 } });
  const mid = await ledger.attenuate(root.token, { budget: { calls: 2 } });
  if (mid.status !== 'issued') throw new Error('mid refused');
  const leaf = await ledger.attenuate(mid.token, { tools: ['notes.read'] });
  if (leaf.status !== 'issued') throw new Error('leaf refused');
  const reader = await ledger.attenuate(leaf.token, { budget: { calls: 1 } });
  if (reader.status !== 'issued') throw new Error('reader refused');
  const sibling = await ledger.attenuate(root.token, { tools: ['notes.read'], budget: { calls: 2 } });
  if (sibling.status !== 'issued') throw new Error('sibling refused');
  await ledger.invoke(leaf.token, 'notes.read', { path: 'drafts/a' });
  await ledger.invoke(leaf.token, 'notes.read', { path: 'drafts/b' });
  await ledger.invoke(sibling.token, 'notes.read', { path: 'drafts/c' });
  const events = ledger.events().slice();
  await ledger.close();
  return { events, root, mid, leaf, reader, sibling };
}

function reseal(events: readonly LedgerEvent[], from: number): LedgerEvent[] {
  const out = events.slice();
  for (let i = from; i < out.length; i++) {
    const prevHash = i === 0 ? '0'.repeat(64) : (out[i - 1] as LedgerEvent).hash;
    const base = { ...(out[i] as LedgerEvent), seq: i + 1, prevHash };
    delete (base as { hash?: string }).hash;
    out[i] = { ...base, hash: eventHash(base as LedgerEvent) } as LedgerEvent;
  }
  return out;
}

function edited(events: readonly LedgerEvent[], predicate: (e: LedgerEvent) => boolean, edit: (e: Record<string, unknown>) => void): LedgerEvent[] {
  const i = events.findIndex(predicate);
  if (i < 0) throw new Error('the log lacks the event the test edits');
  const copy = JSON.parse(JSON.stringify(events[i])) as Record<string, unknown>;
  edit(copy);
  const out = events.slice();
  out[i] = copy as unknown as LedgerEvent;
  return reseal(out, i);
}

const decisionAt = (result: ReturnType<typeof verify>) => result.problems.filter((p) => p.code === 'decision').map((p) => p.seq);
const seqOf = (events: readonly LedgerEvent[], predicate: (e: LedgerEvent) => boolean) => (events.find(predicate) as LedgerEvent).seq;

describe('verify on delegation logs', () => {
  it('passes the genuine log, sequentially and in parallel', async () => {
    const { events } = await delegationLog();
    expect(verify(events)).toEqual({ ok: true, checked: events.length, problems: [] });
    expect(await dist.verifyParallel(jsonl(events), { workerShare: 0.5 })).toEqual(verify(events));
  });

  it("catches a child widened beyond what its parent had left (budget and parentLeft raised together)", async () => {
    const { events, leaf } = await delegationLog();
    const isLeaf = (e: LedgerEvent) => e.type === 'grant.issued' && e.grantId === leaf.grantId;
    const forged = edited(events, isLeaf, (e) => {
      (e.scope as { budget: { calls: number } }).budget.calls = 50;
      (e.parentLeft as { calls: number }).calls = 50;
    });
    const result = verify(forged);
    expect(result.ok).toBe(false);
    expect(decisionAt(result)[0]).toBe(seqOf(forged, isLeaf));
    expect(await dist.verifyParallel(jsonl(forged), { workerShare: 0.5 })).toEqual(result);
  });

  it('catches a child given a tool its parent does not have', async () => {
    const { events, reader } = await delegationLog();
    const isReader = (e: LedgerEvent) => e.type === 'grant.issued' && e.grantId === reader.grantId;
    const forged = edited(events, isReader, (e) => {
      (e.scope as { tools: string[] }).tools = ['notes.read', 'notes.write'];
    });
    expect(decisionAt(verify(forged))[0]).toBe(seqOf(forged, isReader));
  });

  it('catches a child whose window outlives its parent', async () => {
    const { events, mid } = await delegationLog();
    const isMid = (e: LedgerEvent) => e.type === 'grant.issued' && e.grantId === mid.grantId;
    const forged = edited(events, isMid, (e) => {
      (e.scope as { expiresAt: number }).expiresAt += 1;
    });
    expect(decisionAt(verify(forged))[0]).toBe(seqOf(forged, isMid));
  });

  it('catches an extra admission that overspends an ancestor though the child had budget', async () => {
    const { events, sibling, root } = await delegationLog();
    // Root has calls: 3 and all three are used; the sibling has used 1 of its 2: only root lacks budget.
    const siblingCall = events.find((e) => e.type === 'call.admitted' && e.grantId === sibling.grantId) as LedgerEvent;
    expect(siblingCall).toMatchObject({ ancestors: [root.grantId] });
    const extra = { ...siblingCall, callId: 'c_forged' } as LedgerEvent;
    const withExtra = reseal([...events, extra], events.length);
    const result = verify(withExtra);
    expect(result.ok).toBe(false);
    expect(decisionAt(result)).toEqual([withExtra.length]);
    expect(result.problems[0]?.message).toContain('call_budget_exhausted');
  });

  it('catches an admission whose ancestors were dropped (a reservation hidden from the root)', async () => {
    const { events, leaf } = await delegationLog();
    const isLeafCall = (e: LedgerEvent) => e.type === 'call.admitted' && e.grantId === leaf.grantId;
    const forged = edited(events, isLeafCall, (e) => {
      delete e.ancestors;
    });
    expect(decisionAt(verify(forged))[0]).toBe(seqOf(forged, isLeafCall));
  });

  it('catches a revokeDelegation by a grant that is not an ancestor', async () => {
    const { events, sibling, leaf } = await delegationLog();
    const revoked = { type: 'grant.revoked', grantId: leaf.grantId, abortInFlight: false, revokedBy: sibling.grantId, seq: 0, at: (events[events.length - 1] as LedgerEvent).at, prevHash: '', hash: '' } as unknown as LedgerEvent;
    const forged = reseal([...events, revoked], events.length);
    expect(decisionAt(verify(forged))).toEqual([forged.length]);
  });

  it("catches a descendant's call admitted after its ancestor's revocation", async () => {
    const { events, mid } = await delegationLog();
    const leafCall = events.filter((e) => e.type === 'call.admitted')[0] as LedgerEvent;
    const at = (events[events.length - 1] as LedgerEvent).at;
    const revoke = { type: 'grant.revoked', grantId: mid.grantId, abortInFlight: false, seq: 0, at, prevHash: '', hash: '' } as unknown as LedgerEvent;
    const late = { ...leafCall, callId: 'c_after', at } as LedgerEvent;
    const forged = reseal([...events, revoke, late], events.length);
    const result = verify(forged);
    expect(decisionAt(result)).toEqual([forged.length]);
    expect(result.problems[0]?.message).toContain('revoked');
  });

  it('refuses as malformed a root grant that claims what a parent had left, and a child without it', async () => {
    const { events, mid, root } = await delegationLog();
    const rootIssued = (e: LedgerEvent) => e.type === 'grant.issued' && e.grantId === root.grantId;
    const forgedRoot = edited(events, rootIssued, (e) => {
      e.parentLeft = { calls: 1, inputBytes: 1 };
    });
    expect(verify(forgedRoot).problems[0]).toMatchObject({ code: 'malformed' });
    const midIssued = (e: LedgerEvent) => e.type === 'grant.issued' && e.grantId === mid.grantId;
    const forgedMid = edited(events, midIssued, (e) => {
      delete e.parentLeft;
    });
    expect(verify(forgedMid).problems[0]).toMatchObject({ code: 'malformed' });
  });
});

import { createLedger, replay, type Ledger, type LedgerState, type RejectReason } from '../../src';
import { manualClock, notesLedger } from '../support/fixtures';

// Everything in the state but the chain head: a rejection may only append to the log.
function withoutHead(state: LedgerState): Omit<LedgerState, 'head'> {
  const { head: _head, ...rest } = state;
  return rest;
}

describe('every reject reason is reachable through invoke and changes nothing but the log', () => {
  const clock = manualClock();
  let ledger: Ledger;
  let notes: Map<string, string>;
  let runs: string[];
  let token: string;
  let revokedToken: string;
  let futureToken: string;
  let narrowToken: string;

  beforeAll(async () => {
    ({ ledger, notes, runs } = await notesLedger({ clock: clock.now }));
    await ledger.registerTool({ name: 'notes.delete', inputSchema: { type: 'object', properties: { path: { type: 'string' } } }, run: () => runs.push('notes.delete') });
    const t = clock.now();
    ({ token } = await ledger.issue({ tools: ['notes.write', 'notes.read'], resources: ['notes:/drafts/'], expiresAt: t + 60_000, budget: { calls: 1, inputBytes: 60 } }));
    const revoked = await ledger.issue({ tools: ['notes.write'], resources: ['notes:/drafts/'], expiresAt: t + 60_000, budget: { calls: 5, inputBytes: 500 } });
    revokedToken = revoked.token;
    await ledger.revoke(revoked.grantId);
    ({ token: futureToken } = await ledger.issue({ tools: ['notes.write'], resources: ['notes:/drafts/'], notBefore: t + 30_000, expiresAt: t + 60_000, budget: { calls: 5, inputBytes: 500 } }));
    ({ token: narrowToken } = await ledger.issue({ tools: ['notes.write'], args: { 'notes.write': { properties: { text: { maxLength: 3 } } } }, resources: ['notes:/drafts/'], expiresAt: t + 60_000, budget: { calls: 5, inputBytes: 500 } }));
    await ledger.invoke(token, 'notes.write', { path: 'drafts/seed', text: 'x' }); // uses the one call
  });

  afterAll(() => ledger.close());

  const cases: [RejectReason, () => [string, string, unknown]][] = [
    ['unknown_token', () => ['atc_not-a-real-token', 'notes.write', { path: 'drafts/a', text: 'x' }]],
    ['revoked', () => [revokedToken, 'notes.write', { path: 'drafts/a', text: 'x' }]],
    ['not_yet_valid', () => [futureToken, 'notes.write', { path: 'drafts/a', text: 'x' }]],
    ['unknown_tool', () => [narrowToken, 'notes.move', { path: 'drafts/a' }]],
    ['tool_not_granted', () => [narrowToken, 'notes.delete', { path: 'drafts/a' }]],
    ['invalid_arguments', () => [narrowToken, 'notes.write', { path: 'drafts/a' }]],
    ['argument_not_permitted', () => [narrowToken, 'notes.write', { path: 'drafts/a', text: 'too long' }]],
    ['invalid_resource', () => [narrowToken, 'notes.write', { path: 'drafts/../secrets', text: 'x' }]],
    ['resource_not_permitted', () => [narrowToken, 'notes.write', { path: 'drafts-x/a', text: 'x' }]],
    ['call_budget_exhausted', () => [token, 'notes.write', { path: 'drafts/a', text: 'x' }]],
  ];

  it.each(cases)('rejects %s without running a tool', async (reason, call) => {
    const before = { state: withoutHead(ledger.state()), notes: new Map(notes), runs: runs.length, log: ledger.events().length };
    const outcome = await ledger.invoke(...call());
    expect(outcome).toMatchObject({ status: 'rejected', reason });
    expect(runs.length).toBe(before.runs);
    expect(notes).toEqual(before.notes);
    expect(withoutHead(ledger.state())).toEqual(before.state);
    const appended = ledger.events().slice(before.log);
    expect(appended).toHaveLength(1);
    expect(appended[0]).toMatchObject({ type: 'call.rejected', reason, callId: outcome.callId });
  });

  it('rejects expired once the clock passes expiresAt', async () => {
    clock.advance(120_000);
    expect(await ledger.invoke(narrowToken, 'notes.write', { path: 'drafts/a', text: 'x' })).toMatchObject({ status: 'rejected', reason: 'expired' });
    clock.advance(-120_000);
  });

  it('rejects byte_budget_exhausted when the call would overrun the input bytes', async () => {
    const { token: small } = await ledger.issue({ tools: ['notes.write'], resources: ['notes:/drafts/'], expiresAt: clock.now() + 1000, budget: { calls: 5, inputBytes: 20 } });
    expect(await ledger.invoke(small, 'notes.write', { path: 'drafts/a', text: 'more than twenty bytes' })).toMatchObject({ status: 'rejected', reason: 'byte_budget_exhausted' });
  });

  it('explains a rejection without echoing arguments or the token', async () => {
    const outcome = await ledger.invoke(narrowToken, 'notes.write', { path: 'drafts/a', text: 'SECRET-MARKER-7' });
    expect(outcome.status).toBe('rejected');
    expect(JSON.stringify(outcome)).not.toContain('SECRET-MARKER-7');
    expect(JSON.stringify(outcome)).not.toContain(narrowToken);
  });

  it('logs a malformed tool name as (invalid-name), never the raw string', async () => {
    const outcome = await ledger.invoke(narrowToken, 'Not A Tool: MARKER-TOOL', {});
    expect(outcome).toMatchObject({ status: 'rejected', reason: 'unknown_tool' });
    expect(JSON.stringify(ledger.events())).not.toContain('MARKER-TOOL');
  });

  it('treats a non-string token as unknown', async () => {
    expect(await ledger.invoke(42 as unknown as string, 'notes.write', {})).toMatchObject({ status: 'rejected', reason: 'unknown_token' });
  });

  it('keeps replay(events) equal to the live state', () => {
    expect(replay(ledger.events())).toEqual(ledger.state());
  });
});

describe('fail closed: ledger_unavailable', () => {
  it('rejects and runs nothing when the store cannot append', async () => {
    let failing = false;
    const log: unknown[] = [];
    const store = {
      load: () => [],
      append: (events: readonly unknown[]) => {
        if (failing) throw new Error('disk full');
        log.push(...events);
      },
    };
    const { ledger, runs } = await notesLedger({ store: store as never });
    const { token, grantId } = await ledger.issue({ tools: ['notes.write'], resources: ['notes:/drafts/'], expiresAt: Date.now() + 60_000, budget: { calls: 5, inputBytes: 500 } });
    const before = ledger.state();
    failing = true;
    expect(await ledger.invoke(token, 'notes.write', { path: 'drafts/a', text: 'x' })).toMatchObject({ status: 'rejected', reason: 'ledger_unavailable' });
    expect(runs).toEqual([]);
    expect(ledger.state()).toBe(before);
    expect(ledger.usage(grantId).calls.used).toBe(0);
    await expect(ledger.revoke(grantId)).rejects.toMatchObject({ code: 'ledger_unavailable' });
    failing = false;
    expect(await ledger.invoke(token, 'notes.write', { path: 'drafts/a', text: 'x' })).toMatchObject({ status: 'completed' });
    await ledger.close();
  });

  it('rejects calls beyond the pending-command bound instead of queueing without limit', async () => {
    const { ledger } = await notesLedger({ pendingCommandsMax: 4 });
    const { token } = await ledger.issue({ tools: ['notes.write'], resources: ['notes:/drafts/'], expiresAt: Date.now() + 60_000, budget: { calls: 100, inputBytes: 100_000 } });
    const outcomes = await Promise.all(Array.from({ length: 10 }, (_, i) => ledger.invoke(token, 'notes.write', { path: `drafts/${i}`, text: 'x' })));
    expect(outcomes.filter((o) => o.status === 'completed')).toHaveLength(4);
    expect(outcomes.filter((o) => o.status === 'rejected' && o.reason === 'ledger_unavailable')).toHaveLength(6);
    await ledger.close();
  });

  it('rejects calls after close and refuses host commands', async () => {
    const { ledger } = await notesLedger();
    const { token } = await ledger.issue({ tools: ['notes.write'], resources: ['notes:/drafts/'], expiresAt: Date.now() + 60_000, budget: { calls: 100, inputBytes: 100_000 } });
    await ledger.close();
    expect(await ledger.invoke(token, 'notes.write', { path: 'drafts/a', text: 'x' })).toMatchObject({ status: 'rejected', reason: 'ledger_unavailable' });
    await expect(ledger.issue({ tools: ['notes.write'], expiresAt: Date.now() + 1, budget: { calls: 1, inputBytes: 1 } })).rejects.toMatchObject({ code: 'closed' });
  });

  it('refuses to open a store whose log does not chain', async () => {
    const { ledger } = await notesLedger();
    const events = ledger.events().map((e, i) => (i === 1 ? { ...e, at: e.at + 1 } : e));
    expect(() => createLedger({ store: { load: () => events, append: () => undefined } })).toThrow(/seq 2/);
  });
});

import type { Command } from '../../src/domain/commands';
import { principalGrantId } from '../../src/domain/principals';
import { createLedger } from '../../src/createLedger';
import { replay } from '../../src/verification/replay';
import { verify } from '../../src/verification/verify';
import { sealEvent } from '../../src/domain/chain';
import type { LedgerEvent } from '../../src/domain/events';
import { given, issueCommand, payloads, registerNotes, T0 } from '../support/given';
import { manualClock } from '../support/fixtures';

// A principal's root grant (the gateway's OAuth principals): a derived id per generation, at most
// one active grant per principal and policy, decided, folded and re-decided by verify.

type Issue = Extract<Command, { type: 'issue' }>;

function principalIssue(generation: number, at = T0, name = 'alice', policy = 'dev'): Issue {
  const grantId = principalGrantId(name, policy, generation);
  return { ...(issueCommand({}, grantId) as Issue), at, tokenDigest: String(generation).padStart(64, 'b'), principal: { name, policy, generation } };
}

describe('decide: a principal grant', () => {
  it('emits grant.issued carrying the principal, its policy and generation', () => {
    const command = principalIssue(0);
    expect(payloads(given(registerNotes).when(command))[0]).toMatchObject({ type: 'grant.issued', grantId: command.grantId, principal: { name: 'alice', policy: 'dev', generation: 0 } });
  });

  it('refuses an id that is not the one derived from the principal, policy and generation', () => {
    const forged = { ...principalIssue(0), grantId: 'g_forged' };
    expect(given(registerNotes).when(forged)).toMatchObject({ ok: false, code: 'invalid_grant' });
  });

  it('refuses a next generation while the previous grant is active, and accepts it once that grant expired', () => {
    const g = given(registerNotes, principalIssue(0));
    expect(g.when(principalIssue(1, T0 + 1))).toMatchObject({ ok: false, code: 'invalid_grant', message: expect.stringContaining('already has an active grant') });
    expect(g.when(principalIssue(1, T0 + 60_000)).ok).toBe(true);
  });

  it('accepts a next generation once the previous grant is revoked (the host re-enables the principal)', () => {
    const g = given(registerNotes, principalIssue(0), { type: 'revoke', at: T0 + 1, grantId: principalGrantId('alice', 'dev', 0), abortInFlight: false });
    expect(g.when(principalIssue(1, T0 + 2)).ok).toBe(true);
  });

  it('refuses a generation that skips one, and the same generation twice (two gateways at once)', () => {
    expect(given(registerNotes).when(principalIssue(1))).toMatchObject({ ok: false, code: 'invalid_grant', message: 'principal.generation skips a generation' });
    expect(given(registerNotes, principalIssue(0)).when({ ...principalIssue(0), tokenDigest: 'c'.repeat(64) })).toMatchObject({ ok: false, code: 'duplicate_grant' });
  });
});

describe('ledger.issue with a principal', () => {
  it('issues generation 0, refuses a second while it is active, then 1 after expiry; the log replays and verifies', async () => {
    const clock = manualClock();
    const ledger = createLedger({ clock: clock.now });
    await ledger.registerTool({ name: 'notes.write', inputSchema: { type: 'object' }, run: () => 'ok' });
    const options = { tools: ['notes.write'], expiresAt: clock.now() + 1_000, budget: { calls: 1, inputBytes: 100 }, principal: { name: 'alice', policy: 'dev' } };
    const first = await ledger.issue(options);
    expect(first.grantId).toBe(principalGrantId('alice', 'dev', 0));
    await expect(ledger.issue(options)).rejects.toThrow(/already has an active grant/);
    clock.advance(1_000);
    const second = await ledger.issue({ ...options, expiresAt: clock.now() + 1_000 });
    expect(second.grantId).toBe(principalGrantId('alice', 'dev', 1));
    expect(verify(ledger.events())).toMatchObject({ ok: true });
    expect(replay(ledger.events())).toEqual(ledger.state());
    await ledger.close();
  });

  it('verify refuses a log whose principal was edited after the fact', async () => {
    const ledger = createLedger();
    await ledger.registerTool({ name: 'notes.write', inputSchema: { type: 'object' }, run: () => 'ok' });
    await ledger.issue({ tools: ['notes.write'], expiresAt: Date.now() + 60_000, budget: { calls: 1, inputBytes: 100 }, principal: { name: 'alice', policy: 'dev' } });
    const events = ledger.events().map((e) => ({ ...e })) as LedgerEvent[];
    const issued = events[1] as Extract<LedgerEvent, { type: 'grant.issued' }>;
    // Re-sealed, so the hash chain holds: only the re-decision can tell.
    const { seq: _seq, at: _at, prevHash: _prev, hash: _hash, ...payload } = issued;
    events[1] = sealEvent({ ...payload, principal: { name: 'mallory', policy: 'dev', generation: 0 } } as never, issued.at, { seq: 1, hash: events[0]?.hash as string });
    expect(verify(events).ok).toBe(false);
    await ledger.close();
  });
});

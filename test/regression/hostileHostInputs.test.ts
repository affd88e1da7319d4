import { createLedger, LedgerError, limits, verify } from '../../src';
import * as chain from '../../src/domain/chain';
import { manualClock, notesLedger } from '../support/fixtures';

// Regression (issue 10, defect 5): hostile values from the host side of the API (a revoked Proxy
// as arguments, a clock that returns something other than a finite number, an enormous token).

describe('regression: hostile host inputs', () => {
  it('rejects a revoked Proxy as arguments as invalid_arguments instead of throwing', async () => {
    const clock = manualClock();
    const { ledger, runs } = await notesLedger({ clock: clock.now });
    const { token } = await ledger.issue({ tools: ['notes.write'], resources: ['notes:/drafts/'], expiresAt: clock.now() + 60_000, budget: { calls: 5, inputBytes: 1_000 } });
    const { proxy, revoke } = Proxy.revocable({ path: 'drafts/a', text: 'hi' }, {});
    revoke();
    await expect(ledger.invoke(token, 'notes.write', proxy)).resolves.toMatchObject({ status: 'rejected', reason: 'invalid_arguments' });
    const arrayProxy = Proxy.revocable([] as unknown[], {});
    arrayProxy.revoke();
    await expect(ledger.invoke(token, 'notes.write', { path: 'drafts/a', text: arrayProxy.proxy })).resolves.toMatchObject({ status: 'rejected', reason: 'invalid_arguments' });
    expect(runs).toEqual([]);
  });

  describe.each([
    ['undefined', undefined],
    ['a string', '1700000000000'],
    ['a Date', new Date(1_700_000_000_000)],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['-Infinity', Number.NEGATIVE_INFINITY],
  ])('a clock returning %s', (_label, reading) => {
    it('fails a call closed (ledger_unavailable, tool not run, nothing appended)', async () => {
      const clock = manualClock();
      let broken = false;
      const { ledger, runs } = await notesLedger({ clock: () => (broken ? (reading as number) : clock.now()) });
      const { token } = await ledger.issue({ tools: ['notes.write'], resources: ['notes:/drafts/'], expiresAt: clock.now() + 60_000, budget: { calls: 5, inputBytes: 1_000 } });
      const before = ledger.events().length;
      broken = true;
      await expect(ledger.invoke(token, 'notes.write', { path: 'drafts/a', text: 'hi' })).resolves.toMatchObject({ status: 'rejected', reason: 'ledger_unavailable' });
      expect(runs).toEqual([]);
      expect(ledger.events()).toHaveLength(before);
      broken = false;
      await expect(ledger.invoke(token, 'notes.write', { path: 'drafts/a', text: 'hi' })).resolves.toMatchObject({ status: 'completed' });
      expect(verify(ledger.events()).ok).toBe(true);
    });

    it('fails a host command with LedgerError and appends nothing', async () => {
      const ledger = createLedger({ clock: () => reading as number });
      await expect(ledger.registerTool({ name: 'noop', inputSchema: { type: 'object' }, run: () => 1 })).rejects.toBeInstanceOf(LedgerError);
      expect(ledger.events()).toHaveLength(0);
    });
  });

  it('fails closed when the clock throws', async () => {
    const ledger = createLedger({ clock: () => { throw new Error('clock broke'); } });
    await expect(ledger.registerTool({ name: 'noop', inputSchema: { type: 'object' }, run: () => 1 })).rejects.toMatchObject({ name: 'LedgerError', code: 'ledger_unavailable' });
    await expect(ledger.invoke('atc_x', 'noop', {})).resolves.toMatchObject({ status: 'rejected', reason: 'ledger_unavailable' });
    expect(ledger.events()).toHaveLength(0);
  });

  it('does not hash a token longer than any token the ledger issues (unknown_token)', async () => {
    const clock = manualClock();
    const { ledger } = await notesLedger({ clock: clock.now });
    const { token } = await ledger.issue({ tools: ['notes.write'], resources: ['notes:/drafts/'], expiresAt: clock.now() + 60_000, budget: { calls: 5, inputBytes: 1_000 } });
    expect(token.length).toBeLessThanOrEqual(limits.tokenCharsMax);
    const sha256 = jest.spyOn(chain, 'sha256Hex');
    try {
      const huge = token + 'x'.repeat(16 * 1024 * 1024);
      await expect(ledger.invoke(huge, 'notes.write', { path: 'drafts/a', text: 'hi' })).resolves.toMatchObject({ status: 'rejected', reason: 'unknown_token' });
      expect(ledger.visibleTools(huge)).toEqual([]);
      expect(sha256.mock.calls.some(([text]) => text === token)).toBe(false);
      expect(sha256.mock.calls.every(([text]) => text.length < huge.length)).toBe(true);
      // The spy sees token hashing: a real token is hashed when presented.
      await ledger.invoke(token, 'notes.write', { path: 'drafts/a', text: 'hi' });
      expect(sha256.mock.calls.some(([text]) => text === token)).toBe(true);
    } finally {
      sha256.mockRestore();
    }
  });
});

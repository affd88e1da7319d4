import { createLedger, verify, type Ledger, type LedgerEvent } from '../../src';
import { manualClock } from '../support/fixtures';

/**
 * Issue 30 item 10: `ctx.report` read each amount twice (once to validate, once to copy), so a
 * getter or Proxy that changed its value between the reads got a negative charge past validation:
 * the meter went below zero, the cap could be exceeded, and the live log failed its own `verify`.
 * Now each amount is read once into a snapshot, and the snapshot is what is validated and kept.
 */
const minute = 60_000;
type Report = (usage: { [meter: string]: number }) => void;

async function meteredLedger(makeReport: () => object): Promise<{ ledger: Ledger; grantId: string; token: string }> {
  const clock = manualClock();
  const ledger = createLedger({ clock: clock.now });
  await ledger.registerTool({
    name: 'llm.complete',
    inputSchema: { type: 'object' },
    cost: () => ({ usd_micros: 1_000 }),
    run: (_args, ctx) => {
      (ctx.report as Report)(makeReport() as { [meter: string]: number });
      return 'ok';
    },
  });
  const { grantId, token } = await ledger.issue({ tools: ['llm.complete'], expiresAt: clock.now() + minute, budget: { calls: 10, inputBytes: 1_000, meters: { usd_micros: 1_000 } } });
  return { ledger, grantId, token };
}

const charged = (ledger: Ledger): LedgerEvent[] => ledger.events().filter((e) => e.type === 'call.completed' || e.type === 'call.failed');

/** 50 on the first read of each object, then -100,000: what a second read would see. */
function changingGetter(): object {
  let reads = 0;
  return Object.defineProperty({}, 'usd_micros', { enumerable: true, get: () => (reads++ === 0 ? 50 : -100_000) });
}
function changingProxy(): object {
  let reads = 0;
  return new Proxy({ usd_micros: 0 }, { get: (_target, key) => (key === 'usd_micros' ? (reads++ === 0 ? 50 : -100_000) : undefined) });
}

describe.each([
  ['a getter', changingGetter],
  ['a Proxy', changingProxy],
])('ctx.report given %s whose amount changes between reads', (_what, makeReport) => {
  it('charges the one amount it read, never a negative one, and the log verifies', async () => {
    const { ledger, grantId, token } = await meteredLedger(makeReport);
    expect(await ledger.invoke(token, 'llm.complete', {})).toMatchObject({ status: 'completed' });
    expect(charged(ledger)).toEqual([expect.objectContaining({ type: 'call.completed', charged: { usd_micros: 50 } })]);
    expect(ledger.usage(grantId).meters?.usd_micros?.used).toBe(50);
    expect(verify(ledger.events()).ok).toBe(true);
    await ledger.close();
  });

  it('keeps the meter cap: the next call that would pass it is refused', async () => {
    const { ledger, token } = await meteredLedger(makeReport);
    await ledger.invoke(token, 'llm.complete', {});
    // 50 used of 1,000: a second call reserving 1,000 would pass the cap.
    expect(await ledger.invoke(token, 'llm.complete', {})).toMatchObject({ status: 'rejected', reason: 'meter_budget_exhausted' });
    expect(verify(ledger.events()).ok).toBe(true);
    await ledger.close();
  });
});

describe('ctx.report given an object that cannot be read', () => {
  it('throws TypeError inside the tool (a throwing getter, a revoked Proxy): the call is charged its reservation', async () => {
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    const objects: object[] = [
      Object.defineProperty({}, 'usd_micros', { enumerable: true, get: () => { throw new Error('boom'); } }),
      revoked.proxy,
    ];
    for (const object of objects) {
      const { ledger, grantId, token } = await meteredLedger(() => object);
      const outcome = await ledger.invoke(token, 'llm.complete', {});
      expect(outcome).toMatchObject({ status: 'failed', error: expect.any(TypeError) });
      expect(ledger.usage(grantId).meters?.usd_micros?.used).toBe(1_000);
      expect(verify(ledger.events()).ok).toBe(true);
      await ledger.close();
    }
  });
});

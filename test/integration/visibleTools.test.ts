import { replay, visibleTools } from '../../src';
import { manualClock, noteSchema, notesLedger } from '../support/fixtures';

const minute = 60_000;

async function setup() {
  const clock = manualClock();
  const { ledger } = await notesLedger({ clock: clock.now });
  await ledger.registerTool({ name: 'other', inputSchema: { type: 'object', properties: {} }, run: () => 'x' });
  const narrowing = { properties: { text: { maxLength: 20 } } };
  const issued = await ledger.issue({
    tools: ['notes.write', 'notes.read'],
    args: { 'notes.write': narrowing },
    resources: ['notes:/drafts/'],
    notBefore: clock.now() + minute,
    expiresAt: clock.now() + 10 * minute,
    budget: { calls: 1, inputBytes: 1_000 },
  });
  return { clock, ledger, narrowing, ...issued };
}

describe('ledger.visibleTools(token)', () => {
  it("lists the grant's tools in its order with their input schemas and narrowing, and no other tool", async () => {
    const { clock, ledger, token, narrowing } = await setup();
    clock.advance(minute);
    expect(ledger.visibleTools(token)).toEqual([
      { name: 'notes.write', inputSchema: noteSchema, narrowing: [narrowing] },
      { name: 'notes.read', inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }, narrowing: [] },
    ]);
    await ledger.close();
  });

  it('is empty before notBefore and from expiresAt on', async () => {
    const { clock, ledger, token } = await setup();
    expect(ledger.visibleTools(token)).toEqual([]);
    clock.advance(10 * minute - 1);
    expect(ledger.visibleTools(token)).toHaveLength(2);
    clock.advance(1);
    expect(ledger.visibleTools(token)).toEqual([]);
    await ledger.close();
  });

  it('is empty once the grant is revoked', async () => {
    const { clock, ledger, token, grantId } = await setup();
    clock.advance(minute);
    await ledger.revoke(grantId);
    expect(ledger.visibleTools(token)).toEqual([]);
    await ledger.close();
  });

  it('still lists the tools when the budget is spent', async () => {
    const { clock, ledger, token } = await setup();
    clock.advance(minute);
    expect(await ledger.invoke(token, 'notes.read', { path: 'drafts/a' })).toMatchObject({ status: 'completed' });
    expect(await ledger.invoke(token, 'notes.read', { path: 'drafts/a' })).toMatchObject({ reason: 'call_budget_exhausted' });
    expect(ledger.visibleTools(token).map((t) => t.name)).toEqual(['notes.write', 'notes.read']);
    await ledger.close();
  });

  it('never throws: an unknown token, a non-string or a failing clock show nothing', async () => {
    const { clock, ledger, token } = await setup();
    clock.advance(minute);
    expect(ledger.visibleTools('not a token')).toEqual([]);
    expect(ledger.visibleTools(42 as unknown as string)).toEqual([]);
    expect(ledger.visibleTools(undefined as unknown as string)).toEqual([]);
    clock.set(Number.NaN);
    expect(ledger.visibleTools(token)).toEqual([]);
    await ledger.close();
  });

  it('appends nothing to the log', async () => {
    const { clock, ledger, token } = await setup();
    clock.advance(minute);
    const before = ledger.events().length;
    ledger.visibleTools(token);
    ledger.visibleTools('nope');
    expect(ledger.events()).toHaveLength(before);
    await ledger.close();
  });

  it('is a pure function of the state: the same from a replayed log', async () => {
    const { clock, ledger, token, grantId } = await setup();
    clock.advance(minute);
    expect(visibleTools(replay(ledger.events()), grantId, clock.now())).toEqual(ledger.visibleTools(token));
    await ledger.close();
  });
});

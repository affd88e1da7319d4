import { isDeepStrictEqual } from 'node:util';
import { createLedger, replay, sqliteStore, verify, type Ledger } from '../../src';
import { manualClock, noteSchema } from '../support/fixtures';
import { sqliteTempDir } from '../support/sqliteFiles';

const tmp = sqliteTempDir();
afterAll(() => tmp.cleanup());
const hour = 3_600_000;

async function open(file: string, clock: () => number): Promise<{ ledger: Ledger; runs: string[] }> {
  const ledger = createLedger({ clock, store: sqliteStore({ path: file }) });
  const runs: string[] = [];
  await ledger.registerTool<{ path: string; text: string }>({ name: 'notes.write', inputSchema: noteSchema, resources: (a) => [`notes:/${a.path}`], run: (a) => void runs.push(a.path) });
  return { ledger, runs };
}

describe('a ledger reopened on its SQLite file', () => {
  const clock = manualClock();
  const file = tmp.file('restart.sqlite');
  let grants: { kept: { grantId: string; token: string }; revoked: { grantId: string; token: string } };

  beforeAll(async () => {
    const { ledger } = await open(file, clock.now);
    const grant = () => ledger.issue({ tools: ['notes.write'], resources: ['notes:/drafts/'], expiresAt: clock.now() + hour, budget: { calls: 3, inputBytes: 1000 } });
    grants = { kept: await grant(), revoked: await grant() };
    await ledger.invoke(grants.kept.token, 'notes.write', { path: 'drafts/a', text: 'x' });
    await ledger.invoke(grants.kept.token, 'notes.write', { path: 'drafts/b', text: 'x' });
    await ledger.revoke(grants.revoked.grantId);
    await ledger.close();
  });

  it('accepts a token issued before the restart', async () => {
    const { ledger, runs } = await open(file, clock.now);
    expect(await ledger.invoke(grants.kept.token, 'notes.write', { path: 'drafts/c', text: 'x' })).toMatchObject({ status: 'completed' });
    expect(runs).toEqual(['drafts/c']);
    await ledger.close();
  });

  it('keeps the used budget used', async () => {
    const { ledger, runs } = await open(file, clock.now);
    expect(ledger.usage(grants.kept.grantId).calls).toEqual({ limit: 3, used: 3 });
    expect(await ledger.invoke(grants.kept.token, 'notes.write', { path: 'drafts/d', text: 'x' })).toMatchObject({ reason: 'call_budget_exhausted' });
    expect(runs).toEqual([]);
    await ledger.close();
  });

  it('keeps a revocation', async () => {
    const { ledger, runs } = await open(file, clock.now);
    expect(await ledger.invoke(grants.revoked.token, 'notes.write', { path: 'drafts/e', text: 'x' })).toMatchObject({ reason: 'revoked' });
    expect(runs).toEqual([]);
    await ledger.close();
  });

  it('holds the state replay(events) gives, and the log verifies', async () => {
    const { ledger } = await open(file, clock.now);
    expect(isDeepStrictEqual(ledger.state(), replay(ledger.events()))).toBe(true);
    expect(verify(ledger.events())).toMatchObject({ ok: true, problems: [] });
    await ledger.close();
  });

  it('refuses to re-attach a tool under the same name with a changed schema', async () => {
    const ledger = createLedger({ clock: clock.now, store: sqliteStore({ path: file }) });
    await expect(ledger.registerTool({ name: 'notes.write', inputSchema: { type: 'object', properties: { path: { type: 'string' } } }, run: () => null })).rejects.toThrow(/different inputSchema/);
    await ledger.close();
  });
});

describe('calls a crash left open', () => {
  it('are reported by inFlight() on a ledger opened after the crash', async () => {
    const file = tmp.file('inflight.sqlite');
    const crashed = createLedger({ store: sqliteStore({ path: file }) });
    let started: () => void = () => undefined;
    const running = new Promise<void>((resolve) => (started = resolve));
    await crashed.registerTool({ name: 'hang', inputSchema: { type: 'object', properties: {} }, run: () => (started(), new Promise(() => undefined)) });
    const { token, grantId } = await crashed.issue({ tools: ['hang'], expiresAt: Date.now() + hour, budget: { calls: 5, inputBytes: 100 } });
    void crashed.invoke(token, 'hang', {});
    await running; // the tool runs only after call.admitted committed; the process "dies" here (never closed)

    const reopened = createLedger({ store: sqliteStore({ path: file }) });
    expect(reopened.inFlight()).toEqual([expect.objectContaining({ grantId, tool: 'hang', reserved: { calls: 1, inputBytes: 2 } })]);
    expect(reopened.usage(grantId).calls.used).toBe(1);
    await reopened.close();
  });
});

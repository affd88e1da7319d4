import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { createLedger, sqliteStore, verify } from '../../src';
import { sqliteTempDir } from '../support/sqliteFiles';

const tmp = sqliteTempDir();
afterAll(() => tmp.cleanup());
const hour = 3_600_000;
const smallBudget = 10;
const effectsBeforeKill = 80;

describe('a writer killed with SIGKILL under load', () => {
  const file = tmp.file('crash.sqlite');
  const effectsFile = tmp.file('effects.txt');
  let grants: { big: string; small: string };

  beforeAll(async () => {
    const setup = createLedger({ store: sqliteStore({ path: file }) });
    await setup.registerTool({ name: 'effect.write', inputSchema: { type: 'object', properties: { n: { type: 'number' }, hold: { type: 'boolean' } }, required: ['n', 'hold'] }, run: () => null });
    const big = await setup.issue({ tools: ['effect.write'], expiresAt: Date.now() + hour, budget: { calls: 1_000_000, inputBytes: 1_000_000_000 } });
    const small = await setup.issue({ tools: ['effect.write'], expiresAt: Date.now() + hour, budget: { calls: smallBudget, inputBytes: 1_000_000 } });
    await setup.close();
    grants = { big: big.grantId, small: small.grantId };
    writeFileSync(effectsFile, '');

    const writer = spawn(process.execPath, [path.join(__dirname, '..', 'fixtures', 'sqlite-crash-writer.js'), JSON.stringify({ file, effects: effectsFile, bigToken: big.token, smallToken: small.token })], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => writer.on('exit', (_code, signal) => resolve(signal)));
    let reported = 0;
    // Killed once it has reported enough effects: mid-load, in the middle of whatever it was doing.
    readline.createInterface({ input: writer.stdout }).on('line', () => ++reported === effectsBeforeKill && writer.kill('SIGKILL'));
    expect(await exited).toBe('SIGKILL');
  });

  function reopen() {
    return createLedger({ store: sqliteStore({ path: file }) }); // throws if sequence or chain do not verify
  }

  function effects(): { callId: string; held: boolean }[] {
    return readFileSync(effectsFile, 'utf8')
      .split('\n')
      .filter((line) => line.length > 0)
      .map((line) => {
        const [callId, kind] = line.split(' ');
        return { callId: callId as string, held: kind === 'held' };
      });
  }

  it('leaves a log that opens and verifies', async () => {
    const ledger = reopen();
    expect(verify(ledger.events())).toMatchObject({ ok: true, problems: [] });
    await ledger.close();
  });

  it('has a call.admitted event for every effect a tool produced', async () => {
    const ledger = reopen();
    const admitted = new Set(ledger.events().flatMap((e) => (e.type === 'call.admitted' ? [e.callId] : [])));
    const ran = effects();
    expect(ran.length).toBeGreaterThanOrEqual(effectsBeforeKill);
    expect(ran.filter((e) => !admitted.has(e.callId))).toEqual([]);
    await ledger.close();
  });

  it('exceeded no budget', async () => {
    const ledger = reopen();
    const admittedSmall = ledger.events().filter((e) => e.type === 'call.admitted' && e.grantId === grants.small);
    expect(admittedSmall.length).toBeLessThanOrEqual(smallBudget);
    expect(ledger.usage(grants.small).calls.used).toBeLessThanOrEqual(smallBudget);
    expect(ledger.events().some((e) => e.type === 'call.rejected' && e.reason === 'call_budget_exhausted')).toBe(true);
    await ledger.close();
  });

  it('reports the calls left without an outcome through inFlight()', async () => {
    const ledger = reopen();
    const events = ledger.events();
    const settled = new Set(events.flatMap((e) => (e.type === 'call.completed' || e.type === 'call.failed' ? [e.callId] : [])));
    const open = events.flatMap((e) => (e.type === 'call.admitted' && !settled.has(e.callId) ? [e.callId] : []));
    const inFlight = ledger.inFlight().map((c) => c.callId);
    expect(inFlight.sort()).toEqual(open.sort());
    const held = effects().filter((e) => e.held).map((e) => e.callId);
    expect(held.length).toBeGreaterThan(0);
    expect(inFlight).toEqual(expect.arrayContaining(held));
    await ledger.close();
  });
});

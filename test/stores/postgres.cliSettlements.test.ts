import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { openLedger, verify } from '../../src';
import { cliSettlementsDir, openLedgerAt } from '../../src/cli/ledgerFile';
import { postgresStore } from '../../src/postgres';
import { hour } from '../support/pgLedger';
import { describePg, freshSchema, url } from '../support/pgTest';

describe("the CLI's settlement journal for PostgreSQL ledgers", () => {
  it('lives in the XDG state directory, or ~/.local/state without one', () => {
    expect(cliSettlementsDir({ XDG_STATE_HOME: '/var/lib/me' })).toBe('/var/lib/me/agent-tool-capabilities/settlements');
    expect(cliSettlementsDir({})).toBe(path.join(homedir(), '.local', 'state', 'agent-tool-capabilities', 'settlements'));
    // A relative XDG_STATE_HOME is invalid by the spec, and ignored.
    expect(cliSettlementsDir({ XDG_STATE_HOME: 'relative' })).toBe(path.join(homedir(), '.local', 'state', 'agent-tool-capabilities', 'settlements'));
  });
});

describePg('an `atc` command on a postgres:// ledger', () => {
  let state: string;
  const xdgBefore = process.env.XDG_STATE_HOME;
  beforeEach(() => {
    state = mkdtempSync(path.join(tmpdir(), 'atc-cli-state-'));
    process.env.XDG_STATE_HOME = state;
  });
  afterEach(() => {
    if (xdgBefore === undefined) delete process.env.XDG_STATE_HOME;
    else process.env.XDG_STATE_HOME = xdgBefore;
    rmSync(state, { recursive: true, force: true });
  });

  it('settles what a proxy that died while the server was down had journalled in the state directory', async () => {
    const schema = freshSchema('cli');
    const host = await openLedger({ store: postgresStore({ connectionString: url(), schema }) });
    let release: () => void = () => undefined;
    await host.registerTool({ name: 'work', inputSchema: { type: 'object' }, run: () => new Promise<void>((resolve) => (release = resolve)) });
    const { token } = await host.issue({ tools: ['work'], expiresAt: Date.now() + hour, budget: { calls: 5, inputBytes: 1_000 } });
    const running = host.invoke(token, 'work', {});
    while (host.inFlight().length === 0) await new Promise((resolve) => setImmediate(resolve));
    const callId = (host.inFlight()[0] as { callId: string }).callId;
    // What the dead proxy left: its journal entry for the call, under the log's directory.
    const logDir = path.join(cliSettlementsDir(), `${schema}-${(host.events()[0] as { hash: string }).hash.slice(0, 16)}`);
    mkdirSync(logDir, { recursive: true });
    writeFileSync(path.join(logDir, '0123456789abcdef.json'), JSON.stringify([{ callId, outcome: 'completed', refund: false }]));

    const cli = await openLedgerAt(`${url()}?schema=${schema}`, { create: false });
    await cli.close(); // waits for the settlement it took over
    expect(readdirSync(logDir)).toEqual([]);
    release();
    await running;
    await host.close();

    const reopened = await openLedger({ store: postgresStore({ connectionString: url(), schema }) });
    const events = reopened.events();
    expect(events.filter((e) => e.type === 'call.completed' && e.callId === callId)).toHaveLength(1);
    expect(reopened.inFlight()).toEqual([]);
    expect(verify(events)).toMatchObject({ ok: true, problems: [] });
    await reopened.close();
  });
});

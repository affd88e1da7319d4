import fs from 'node:fs';
import { openLedger, sqliteStore } from '../src';
import { runPolicy } from '../src/cli/commands/policy';
import { manualClock } from './support/fixtures';
import { pgStore } from './support/pgLedger';
import { describePg, freshSchema, url } from './support/pgTest';
import { captureIo, sqliteTempDir } from './support/sqliteFiles';

// `atc policy diff <postgres://…>` and `check --ledger <postgres://…>` read the log as `atc audit`
// does, and answer what they answer for the same log in a SQLite file.
const tmp = sqliteTempDir();
afterAll(() => tmp.cleanup());
const hour = 3_600_000;

async function twinLogs(): Promise<{ pg: string; file: string }> {
  const clock = manualClock(Date.UTC(2026, 0, 1));
  const schema = freshSchema('policy');
  const ledger = await openLedger({ clock: clock.now, store: pgStore(schema) });
  await ledger.registerTool({ name: 'notes.write', inputSchema: { type: 'object', properties: { p: { type: 'string' } } }, run: () => null });
  const a = await ledger.issue({ tools: ['notes.write'], expiresAt: clock.now() + hour, budget: { calls: 3, inputBytes: 1_000 } });
  for (const p of ['x', 'xy', 'xyz']) {
    await ledger.invoke(a.token, 'notes.write', { p });
    clock.advance(60_000);
  }
  const events = ledger.events();
  await ledger.close();
  const file = tmp.file(`${schema}.sqlite`);
  const sqlite = sqliteStore({ path: file });
  sqlite.append(events);
  sqlite.close();
  return { pg: `${url()}?schema=${schema}`, file };
}

describePg('atc policy on a postgres:// log', () => {
  it('diff and check give the same answers as for the SQLite copy', async () => {
    const logs = await twinLogs();
    const candidate = tmp.file('candidate.json');
    fs.writeFileSync(candidate, JSON.stringify({ tools: ['notes.write'], expiresIn: '1h', budget: { calls: 2, inputBytes: 1_000 } }));
    const fromPg = captureIo();
    const fromFile = captureIo();
    expect(await runPolicy(['diff', logs.pg, '--policy', candidate, '--json'], fromPg)).toBe(1);
    expect(await runPolicy(['diff', logs.file, '--policy', candidate, '--json'], fromFile)).toBe(1);
    expect(JSON.parse(fromPg.stdout[0] as string)).toEqual(JSON.parse(fromFile.stdout[0] as string));
    expect(JSON.parse(fromPg.stdout[0] as string).changes).toEqual([expect.objectContaining({ tool: 'notes.write', before: 'admitted', after: 'call_budget_exhausted' })]);
    const checked = captureIo();
    expect(await runPolicy(['check', candidate, '--ledger', logs.pg, '--json'], checked)).toBe(0);
    expect(JSON.parse(checked.stdout[0] as string)).toEqual({ ok: true, tools: 'log', problems: [] });
  });
});

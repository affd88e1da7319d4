import fs from 'node:fs';
import { runPolicy } from '../../src/cli/commands/policy';
import { describePg } from '../support/pgTest';
import { captureIo, sqliteTempDir } from '../support/sqliteFiles';
import { twinLogs } from '../support/twinLogs';

// `atc policy diff <postgres://…>` and `check --ledger <postgres://…>` read the log as `atc audit`
// does, and answer what they answer for the same log in a SQLite file.
const tmp = sqliteTempDir();
afterAll(() => tmp.cleanup());

describePg('atc policy on a postgres:// log', () => {
  it('diff and check give the same answers as for the SQLite copy', async () => {
    const logs = await twinLogs({ prefix: 'policy', calls: 3, start: Date.UTC(2026, 0, 1), file: tmp.file });
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

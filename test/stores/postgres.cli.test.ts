import { readFileSync } from 'node:fs';
import type { Pool } from 'pg';
import { runAudit } from '../../src/cli/commands/audit';
import { runExport } from '../../src/cli/commands/export';
import { runVerify } from '../../src/cli/commands/verify';
import { adminPool, describePg, freshSchema, url } from '../support/pgTest';
import { captureIo, sqliteTempDir } from '../support/sqliteFiles';
import { twinLogs, type TwinLogs } from '../support/twinLogs';

const tmp = sqliteTempDir();
afterAll(() => tmp.cleanup());

/** The same log in PostgreSQL and in a SQLite file: a few admissions, a rejection, completions. */
const twins = (): Promise<TwinLogs> => twinLogs({ prefix: 'cli', calls: 2, start: Date.UTC(2025, 0, 1), file: tmp.file });

describePg('atc audit | verify | export on a postgres:// URL', () => {
  let admin: Pool;
  let logs: TwinLogs;
  beforeAll(async () => {
    admin = adminPool();
    logs = await twins();
  });
  afterAll(() => admin.end());

  it('atc audit prints what it prints for the same log in a SQLite file', async () => {
    for (const flags of [[], ['--json'], ['--rejected', '--json'], ['--tree', '--at', '1735689600000']]) {
      const fromPg = captureIo();
      const fromFile = captureIo();
      expect(await runAudit([logs.pg, ...flags], fromPg)).toBe(0);
      expect(await runAudit([logs.file, ...flags], fromFile)).toBe(0);
      expect(fromPg.stdout).toEqual(fromFile.stdout);
      expect(fromPg.stdout.length).toBeGreaterThan(0);
    }
  });

  it('atc export writes the same JSON Lines', async () => {
    const pgOut = tmp.file('pg.jsonl');
    const fileOut = tmp.file('file.jsonl');
    expect(await runExport([logs.pg, '--output', pgOut], captureIo())).toBe(0);
    expect(await runExport([logs.file, '--output', fileOut], captureIo())).toBe(0);
    expect(readFileSync(pgOut, 'utf8')).toBe(readFileSync(fileOut, 'utf8'));
  });

  it('atc verify exits 0 with the same report, the URL in place of the path', async () => {
    const fromPg = captureIo();
    const fromFile = captureIo();
    expect(await runVerify([logs.pg], fromPg)).toBe(0);
    expect(await runVerify([logs.file], fromFile)).toBe(0);
    expect(fromPg.stdout.slice(1)).toEqual(fromFile.stdout.slice(1));
    expect(fromPg.stdout[0]).toContain('postgres://');
  });

  it('atc verify exits 1 on a log edited by a superuser past the trigger, and says where', async () => {
    const copy = await twins();
    await admin.query(`ALTER TABLE ${copy.schema}.events DISABLE TRIGGER events_refuse_update_delete`);
    await admin.query(`UPDATE ${copy.schema}.events SET body = replace(body, 'notes.write', 'notes.wrote') WHERE seq = 3`);
    const io = captureIo();
    expect(await runVerify([copy.pg], io)).toBe(1);
    expect(io.stderr.join('\n')).toMatch(/trigger events_refuse_update_delete is missing or disabled/);
    expect(io.stderr.join('\n')).toMatch(/seq 3/);
  });

  it('exits 2 when the server cannot be reached or holds no ledger, as for an unreadable file', async () => {
    for (const command of [runAudit, runExport, runVerify]) {
      const io = captureIo();
      expect(await command(['postgres://postgres@127.0.0.1:1/postgres'], io)).toBe(2);
      const missing = captureIo();
      expect(await command([`${url()}?schema=${freshSchema('none')}`], missing)).toBe(2);
      expect(missing.stderr.join('\n')).toMatch(/no ledger/);
    }
  });

  it('never prints the password of the URL', async () => {
    const io = captureIo();
    await runVerify(['postgres://postgres:s3cret-pw@127.0.0.1:1/postgres'], io);
    expect([...io.stdout, ...io.stderr].join('\n')).not.toContain('s3cret-pw');
  });
});

import Database from 'better-sqlite3';
import { canonicalJson, createLedger, eventHash, LedgerError, sqliteStore, type LedgerEvent } from '../../src';
import { verifySqliteFile } from '../../src/stores/sqlite/sqliteVerify';
import { runVerify } from '../../src/cli/commands/verify';
import { captureIo, sqliteTempDir, tamper } from '../support/sqliteFiles';

const tmp = sqliteTempDir();
afterAll(() => tmp.cleanup());
const hour = 3_600_000;

/** 12 events: register, issue, 5 completed calls; no snapshots, so open checks the whole chain. */
async function log(name: string): Promise<string> {
  const file = tmp.file(name);
  const ledger = createLedger({ store: sqliteStore({ path: file, snapshotEvery: 0 }) });
  await ledger.registerTool({ name: 'noop', inputSchema: { type: 'object', properties: {} }, run: () => null });
  const { token } = await ledger.issue({ tools: ['noop'], expiresAt: Date.now() + hour, budget: { calls: 9, inputBytes: 100 } });
  for (let i = 0; i < 5; i++) await ledger.invoke(token, 'noop', {});
  await ledger.close();
  return file;
}

const open = (file: string) => () => createLedger({ store: sqliteStore({ path: file }) });

describe('tampering made directly in the SQLite file', () => {
  it('an edited event is refused on open, naming its seq', async () => {
    const file = await log('edited.sqlite');
    tamper(file, `UPDATE events SET body = replace(body, '"calls":1', '"calls":0') WHERE seq = 5`, { dropTriggers: true });
    expect(open(file)).toThrow(new LedgerError('invalid_log', "stored log's hash chain breaks at seq 5"));
  });

  it('an edited event whose hash was recomputed is refused at the next seq', async () => {
    const file = await log('rehashed.sqlite');
    tamper(file, 'SELECT 1', { dropTriggers: true });
    const db = new Database(file);
    const edited = { ...(JSON.parse(db.prepare('SELECT body FROM events WHERE seq = 5').pluck().get() as string) as LedgerEvent), at: 1 };
    const resealed = { ...edited, hash: eventHash(edited) };
    db.prepare('UPDATE events SET body = ?, hash = ?, at = 1 WHERE seq = 5').run(canonicalJson(resealed), resealed.hash);
    db.close();
    expect(open(file)).toThrow(new LedgerError('invalid_log', "stored log's hash chain breaks at seq 6"));
  });

  it('a deleted event is refused on open, naming the missing seq', async () => {
    const file = await log('deleted.sqlite');
    tamper(file, 'DELETE FROM events WHERE seq = 6', { dropTriggers: true });
    expect(open(file)).toThrow(new LedgerError('invalid_log', 'stored log is out of sequence: expected seq 6, found seq 7'));
  });

  it('an edited event fails atc verify with its seq', async () => {
    const file = await log('verify-edited.sqlite');
    tamper(file, `UPDATE events SET body = replace(body, '"calls":1', '"calls":0') WHERE seq = 5`, { dropTriggers: true });
    const io = captureIo();
    expect(await runVerify([file], io)).toBe(1);
    expect(io.stderr).toContain('  seq 5 hash: hash does not match the event content');
    expect(io.stderr.at(-1)).toMatch(/NOT VERIFIED: .*first at seq 5$/);
  });

  it('a deleted event fails atc verify with the seq after the gap', async () => {
    const file = await log('verify-deleted.sqlite');
    tamper(file, 'DELETE FROM events WHERE seq = 6', { dropTriggers: true });
    const io = captureIo();
    expect(await verifySqliteFile(file, io)).toBe(1);
    expect(io.stderr.join('\n')).toContain('seq 7 sequence: expected seq 6, found 7');
  });

  it('an indexed column edited apart from its body fails atc verify', async () => {
    const file = await log('column.sqlite');
    tamper(file, "UPDATE events SET grant_id = 'g_other' WHERE seq = 4", { dropTriggers: true });
    const io = captureIo();
    expect(await verifySqliteFile(file, io)).toBe(1);
    expect(io.stderr.join('\n')).toContain('seq 4 column: column grant_id disagrees with the event body');
  });

  it('dropped append-only triggers fail atc verify even when every event is intact', async () => {
    const file = await log('no-triggers.sqlite');
    tamper(file, 'SELECT 1', { dropTriggers: true });
    const io = captureIo();
    expect(await verifySqliteFile(file, io)).toBe(1);
    expect(io.stderr.join('\n')).toContain('trigger events_refuse_update is missing');
  });

  it('an intact log passes atc verify', async () => {
    const file = await log('intact.sqlite');
    const io = captureIo();
    expect(await runVerify([file], io)).toBe(0);
    expect(io.stdout.at(-1)).toMatch(/^verified: head seq 12 hash [0-9a-f]{64}$/);
  });
});

import { isDeepStrictEqual } from 'node:util';
import Database from 'better-sqlite3';
import { createLedger, LedgerError, replay, sha256Hex, sqliteStore, type Ledger } from '../../src';
import { verifySqliteFile } from '../../src/stores/sqlite/sqliteVerify';
import { captureIo, sqliteTempDir, tamper } from '../support/sqliteFiles';

const tmp = sqliteTempDir();
afterAll(() => tmp.cleanup());
const hour = 3_600_000;

/** A log of `calls` completed calls (2 events each) after a register and an issue, snapshotting every `every`. */
async function logWithCalls(file: string, calls: number, every: number): Promise<void> {
  const ledger = createLedger({ store: sqliteStore({ path: file, snapshotEvery: every }) });
  await ledger.registerTool({ name: 'noop', inputSchema: { type: 'object', properties: { i: { type: 'number' } } }, run: () => null });
  const { token } = await ledger.issue({ tools: ['noop'], expiresAt: Date.now() + hour, budget: { calls: 1_000, inputBytes: 100_000 } });
  for (let i = 0; i < calls; i++) await ledger.invoke(token, 'noop', { i });
  await ledger.close();
}

function snapshotSeqs(file: string): number[] {
  const db = new Database(file, { readonly: true });
  const seqs = db.prepare('SELECT seq FROM snapshots ORDER BY seq').pluck().all() as number[];
  db.close();
  return seqs;
}

function reopen(file: string, options: { verifyOnOpen?: 'tail' | 'full' } = {}): { ledger: Ledger; snapshotSeq: number | undefined } {
  const store = sqliteStore({ path: file, snapshotEvery: 0, ...options });
  const ledger = createLedger({ store });
  return { ledger, snapshotSeq: store.openedFromSnapshotSeq };
}

describe('snapshots', () => {
  it('are written as the log grows past each interval, keeping the newest two', async () => {
    const file = tmp.file('interval.sqlite');
    await logWithCalls(file, 20, 10); // 42 events
    const seqs = snapshotSeqs(file);
    expect(seqs).toHaveLength(2);
    expect((seqs[1] as number) - (seqs[0] as number)).toBeGreaterThanOrEqual(10);
    expect(seqs[1]).toBeGreaterThan(30);
  });

  it('open a log from the newest one, to the same state a full replay gives', async () => {
    const file = tmp.file('open.sqlite');
    await logWithCalls(file, 20, 10);
    const { ledger, snapshotSeq } = reopen(file);
    expect(snapshotSeq).toBe(snapshotSeqs(file).at(-1));
    expect(isDeepStrictEqual(ledger.state(), replay(ledger.events()))).toBe(true);
    expect(Object.isFrozen(ledger.state().grants)).toBe(true);
    await ledger.close();
  });

  it("are skipped when the head hash does not match the stored event at their seq", async () => {
    const file = tmp.file('unbound.sqlite');
    await logWithCalls(file, 20, 10);
    const [older, newest] = snapshotSeqs(file);
    tamper(file, `UPDATE snapshots SET head_hash = '${'f'.repeat(64)}' WHERE seq = ${newest}`);
    const { ledger, snapshotSeq } = reopen(file);
    expect(snapshotSeq).toBe(older);
    expect(isDeepStrictEqual(ledger.state(), replay(ledger.events()))).toBe(true);
    await ledger.close();
  });

  it('are skipped when their text does not hash to their state hash', async () => {
    const file = tmp.file('corrupt.sqlite');
    await logWithCalls(file, 20, 10);
    tamper(file, "UPDATE snapshots SET state = replace(state, '\"used\":{\"calls\":', '\"used\":{\"calls\":1')");
    const { ledger, snapshotSeq } = reopen(file);
    expect(snapshotSeq).toBeUndefined();
    expect(isDeepStrictEqual(ledger.state(), replay(ledger.events()))).toBe(true);
    await ledger.close();
  });

  it("are ignored with verifyOnOpen: 'full'", async () => {
    const file = tmp.file('full.sqlite');
    await logWithCalls(file, 20, 10);
    const { ledger, snapshotSeq } = reopen(file, { verifyOnOpen: 'full' });
    expect(snapshotSeq).toBeUndefined();
    await ledger.close();
  });

  it('do not hide tampering after the snapshot: open refuses the log', async () => {
    const file = tmp.file('after.sqlite');
    await logWithCalls(file, 20, 10);
    const head = 42;
    expect(snapshotSeqs(file).at(-1)).toBeLessThan(head);
    tamper(file, `UPDATE events SET body = replace(body, '"at":', '"at":1') WHERE seq = ${head}`, { dropTriggers: true });
    expect(() => reopen(file)).toThrow(new LedgerError('invalid_log', `stored log's hash chain breaks at seq ${head}`));
  });

  it('trust the events they cover on open; atc verify still finds tampering there', async () => {
    const file = tmp.file('before.sqlite');
    await logWithCalls(file, 20, 10);
    tamper(file, `UPDATE events SET body = replace(body, '"at":', '"at":1') WHERE seq = 5`, { dropTriggers: true });
    tamper(file, 'CREATE TRIGGER events_refuse_update BEFORE UPDATE ON events BEGIN SELECT RAISE(ABORT, "x"); END; CREATE TRIGGER events_refuse_delete BEFORE DELETE ON events BEGIN SELECT RAISE(ABORT, "x"); END;');
    const { ledger, snapshotSeq } = reopen(file);
    expect(snapshotSeq).toBeGreaterThan(5);
    await ledger.close();
    const io = captureIo();
    expect(await verifySqliteFile(file, io)).toBe(1);
    expect(io.stderr.at(-1)).toMatch(/NOT VERIFIED: .*first at seq 5$/);
  });

  it('that were forged (state edited and re-hashed) are caught by atc verify', async () => {
    const file = tmp.file('forged.sqlite');
    await logWithCalls(file, 20, 10);
    const db = new Database(file);
    const row = db.prepare('SELECT seq, state FROM snapshots ORDER BY seq DESC LIMIT 1').get() as { seq: number; state: string };
    const forged = row.state.replace(/"used":\{"calls":\d+/, '"used":{"calls":0');
    expect(forged).not.toBe(row.state);
    db.prepare('UPDATE snapshots SET state = ?, state_hash = ? WHERE seq = ?').run(forged, sha256Hex(forged), row.seq);
    db.close();
    const io = captureIo();
    expect(await verifySqliteFile(file, io)).toBe(1);
    expect(io.stderr.join('\n')).toContain(`seq ${row.seq} snapshot: snapshot state differs from the replay of the events it covers`);
  });
});

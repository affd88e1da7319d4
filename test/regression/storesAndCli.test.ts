import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { createLedger, LedgerError, sha256Hex, sqliteStore } from '../../src';
import { runExport } from '../../src/cli/commands/export';
import { captureIo, sqliteTempDir, tamper } from '../support/sqliteFiles';

// Regression (issue 10, defect 6): the SQLite store and the CLI on hostile files and pipes.

const tmp = sqliteTempDir();
afterAll(() => tmp.cleanup());

async function storedLog(name: string, options: { snapshotEvery?: number } = {}): Promise<string> {
  const file = tmp.file(name);
  const ledger = createLedger({ store: sqliteStore({ path: file, ...options }), clock: () => 1_700_000_000_000 });
  await ledger.registerTool({ name: 'work', inputSchema: { type: 'object' }, run: () => 1 });
  const { token } = await ledger.issue({ tools: ['work'], expiresAt: 1_700_000_060_000, budget: { calls: 50, inputBytes: 1_000 } });
  for (let i = 0; i < 5; i++) await ledger.invoke(token, 'work', {});
  await ledger.close();
  return file;
}

describe('regression: stores and CLI on hostile input', () => {
  it('throws LedgerError, not a raw TypeError, from events() after close()', async () => {
    const ledger = createLedger({ store: sqliteStore({ path: tmp.file('closed.sqlite') }) });
    await ledger.close();
    expect(() => ledger.events()).toThrow(LedgerError);
    expect(() => ledger.events()).toThrow(expect.objectContaining({ code: 'closed' }));
  });

  it.each([
    ['not JSON', `'{"seq":'`],
    ['JSON null', `'null'`],
    ['a JSON array', `'[]'`],
  ])('refuses to open a log with a stored body that is %s (LedgerError invalid_log)', async (_label, body) => {
    const file = await storedLog(`body-${body.length}.sqlite`);
    tamper(file, `UPDATE events SET body = ${body} WHERE seq = 3`, { dropTriggers: true });
    expect(() => createLedger({ store: sqliteStore({ path: file }) })).toThrow(expect.objectContaining({ name: 'LedgerError', code: 'invalid_log' }));
  });

  it('skips a snapshot of the wrong shape and opens by replay', async () => {
    const file = await storedLog('snapshot-shape.sqlite', { snapshotEvery: 1 });
    const reference = createLedger({ store: sqliteStore({ path: file, verifyOnOpen: 'full' }) });
    const expected = reference.state();
    await reference.close();
    // Rewrite every snapshot as a state with the right head but no containers, its hash made to match.
    const db = new Database(file);
    for (const row of db.prepare('SELECT seq, head_hash FROM snapshots').all() as { seq: number; head_hash: string }[]) {
      const state = JSON.stringify({ head: { seq: row.seq, hash: row.head_hash } });
      db.prepare('UPDATE snapshots SET state = ?, state_hash = ? WHERE seq = ?').run(state, sha256Hex(state), row.seq);
    }
    db.close();
    const ledger = createLedger({ store: sqliteStore({ path: file }) });
    expect(ledger.state()).toEqual(expected);
    await ledger.close();
  });

  it('opens from replay when a snapshot passes its checks but cannot be folded on', async () => {
    const file = await storedLog('snapshot-fold.sqlite', { snapshotEvery: 1 });
    const reference = createLedger({ store: sqliteStore({ path: file, verifyOnOpen: 'full' }) });
    const expected = reference.state();
    await reference.close();
    const db = new Database(file);
    // The oldest snapshot with a grant in it, its usage record broken: folding the next call throws.
    const oldest = db.prepare(`SELECT seq, state FROM snapshots WHERE state LIKE '%"used":%' ORDER BY seq LIMIT 1`).get() as { seq: number; state: string };
    db.prepare('DELETE FROM snapshots WHERE seq <> ?').run(oldest.seq);
    const broken = oldest.state.replace(/"used":\{[^}]*\}/, '"used":null');
    expect(broken).not.toBe(oldest.state);
    db.prepare('UPDATE snapshots SET state = ?, state_hash = ? WHERE seq = ?').run(broken, sha256Hex(broken), oldest.seq);
    db.close();
    const ledger = createLedger({ store: sqliteStore({ path: file }) });
    expect(ledger.state()).toEqual(expected);
    await ledger.close();
  });

  describe('atc export --output refuses what is not a regular file', () => {
    it('refuses a symlink and leaves it and its target alone', async () => {
      const file = await storedLog('export-src.sqlite');
      const target = tmp.file('precious.txt');
      writeFileSync(target, 'keep me');
      const link = tmp.file('link.jsonl');
      symlinkSync(target, link);
      const io = captureIo();
      expect(await runExport([file, '--output', link], io)).toBe(2);
      expect(io.stderr.join('\n')).toMatch(/symbolic link/);
      expect(lstatSync(link).isSymbolicLink()).toBe(true);
      expect(readFileSync(target, 'utf8')).toBe('keep me');
    });

    it('refuses a FIFO, a device and a directory', async () => {
      const file = await storedLog('export-src2.sqlite');
      const fifo = tmp.file('pipe.jsonl');
      expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
      const dir = tmp.file('dir.jsonl');
      mkdirSync(dir);
      for (const [output, what] of [[fifo, /FIFO/], ['/dev/null', /device/], [dir, /directory/]] as const) {
        const io = captureIo();
        expect(await runExport([file, '--output', output], io)).toBe(2);
        expect(io.stderr.join('\n')).toMatch(what);
      }
      expect(lstatSync(fifo).isFIFO()).toBe(true);
      expect(lstatSync('/dev/null').isCharacterDevice()).toBe(true);
    });

    it('still writes a new file and replaces a regular one', async () => {
      const file = await storedLog('export-src3.sqlite');
      const out = tmp.file('out.jsonl');
      expect(await runExport([file, '--output', out], captureIo())).toBe(0);
      expect(await runExport([file, '--output', out], captureIo())).toBe(0);
      expect(existsSync(out) && readFileSync(out, 'utf8').split('\n').filter(Boolean)).toHaveLength(12);
    });
  });

  it('atc verify … | head: a closed pipe is no crash, and the exit code is the verdict', async () => {
    const file = await storedLog('pipe.sqlite');
    const cli = path.join(__dirname, '..', '..', 'dist', 'src', 'cli', 'main.js');
    // `true` exits at once: every write atc makes goes to a pipe nobody reads (EPIPE).
    const result = spawnSync('bash', ['-c', `node ${JSON.stringify(cli)} verify ${JSON.stringify(file)} | true; echo "status=\${PIPESTATUS[0]}"`], { encoding: 'utf8' });
    expect(result.stderr).not.toMatch(/EPIPE|Error/);
    expect(result.stdout.trim()).toBe('status=0');
  });
});

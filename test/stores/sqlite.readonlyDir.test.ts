import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdtempSync, rmdirSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { createLedger, LedgerError, sqliteStore, type Ledger } from '../../src';
import { runAudit } from '../../src/cli/commands/audit';
import { runExport } from '../../src/cli/commands/export';
import { runVerify } from '../../src/cli/commands/verify';
import { manualClock } from '../support/fixtures';
import { captureIo, sqliteTempDir } from '../support/sqliteFiles';

/**
 * A read-only view of a directory, the way read-only media look to SQLite: root ignores permission
 * bits, so as root a read-only bind mount (`mount --bind` + `remount,ro,bind`); otherwise the directory
 * made unwritable. `null` when neither is possible here (a container without CAP_SYS_ADMIN).
 */
function readOnlyView(dir: string): { readonly dir: string; release(): void } | null {
  if (process.getuid?.() !== 0) {
    chmodSync(dir, 0o555);
    return { dir, release: () => chmodSync(dir, 0o755) };
  }
  const view = mkdtempSync(path.join(os.tmpdir(), 'atc-ro-view-'));
  try {
    execFileSync('mount', ['--bind', dir, view], { stdio: 'ignore' });
  } catch {
    rmdirSync(view);
    return null;
  }
  const release = (): void => {
    execFileSync('umount', [view], { stdio: 'ignore' });
    rmdirSync(view);
  };
  try {
    execFileSync('mount', ['-o', 'remount,ro,bind', view], { stdio: 'ignore' });
  } catch {
    release();
    return null;
  }
  return { dir: view, release };
}

const tmp = sqliteTempDir();
const clock = manualClock(Date.UTC(2025, 0, 1));
const hour = 3_600_000;
let view: ReturnType<typeof readOnlyView> = null;
let writer: Ledger | undefined;

/** Seq 1-2: a tool and a grant; 3-4: one admitted and completed call. */
async function writeLog(file: string): Promise<Ledger> {
  const ledger = createLedger({ clock: clock.now, store: sqliteStore({ path: file }) });
  await ledger.registerTool({ name: 'notes.write', inputSchema: { type: 'object' }, run: () => null });
  const grant = await ledger.issue({ tools: ['notes.write'], expiresAt: clock.now() + hour, budget: { calls: 5, inputBytes: 1_000 } });
  await ledger.invoke(grant.token, 'notes.write', {});
  return ledger;
}

beforeAll(async () => {
  await (await writeLog(tmp.file('closed.sqlite'))).close();
  // Still open, so its commits are in open.sqlite-wal (with the -shm SQLite reads it through).
  writer = await writeLog(tmp.file('open.sqlite'));
  // What a crash leaves when only the file and its -wal are copied to read-only media: no -shm.
  copyFileSync(tmp.file('open.sqlite'), tmp.file('stale.sqlite'));
  copyFileSync(tmp.file('open.sqlite-wal'), tmp.file('stale.sqlite-wal'));
  view = readOnlyView(tmp.dir);
});
afterAll(async () => {
  // First: SQLite keeps a reader's descriptor on the same inode open while this process's writer holds locks.
  await writer?.close();
  view?.release();
  tmp.cleanup();
});

const inView = (name: string): string => {
  if (view === null) throw new Error('no read-only view');
  return path.join(view.dir, name);
};
const canMakeReadOnly = process.getuid?.() !== 0 || ((): boolean => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'atc-ro-probe-'));
  const probe = readOnlyView(dir);
  probe?.release();
  rmdirSync(dir);
  return probe !== null;
})();
const describeReadOnly = canMakeReadOnly ? describe : describe.skip;

describeReadOnly('a SQLite log in a read-only directory', () => {
  it('cannot be read in place by SQLite (the failure this handles)', () => {
    const db = new Database(inView('closed.sqlite'), { readonly: true, fileMustExist: true });
    try {
      expect(() => db.prepare('SELECT count(*) FROM events').get()).toThrow(/unable to open database file|attempt to write a readonly database/);
    } finally {
      db.close();
    }
  });

  it('opens with readonly: true from an in-memory copy: the state rebuilds and admissions fail closed', async () => {
    const store = sqliteStore({ path: inView('closed.sqlite'), readonly: true });
    const ledger = createLedger({ clock: clock.now, store });
    try {
      expect(store.readonly).toBe(true);
      expect(ledger.events().map((e) => e.type)).toEqual(['tool.registered', 'grant.issued', 'call.admitted', 'call.completed']);
      const refused = await ledger.issue({ tools: ['notes.write'], expiresAt: clock.now() + hour, budget: { calls: 1, inputBytes: 10 } }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(LedgerError);
      expect(refused).toMatchObject({ code: 'ledger_unavailable' });
      expect(statSync(inView('closed.sqlite')).size).toBe(statSync(tmp.file('closed.sqlite')).size);
      expect(existsSync(tmp.file('closed.sqlite-shm'))).toBe(false);
    } finally {
      await ledger.close();
    }
  });

  it('atc verify prints the head and exits 0; atc audit and atc export read it too', async () => {
    const io = captureIo();
    expect(await runVerify([inView('closed.sqlite')], io)).toBe(0);
    expect(io.stdout.at(-1)).toMatch(/^verified: head seq 4 hash [0-9a-f]{64}$/);
    expect(await runAudit([inView('closed.sqlite')], captureIo())).toBe(0);
    const exported = captureIo();
    expect(await runExport([inView('closed.sqlite')], exported)).toBe(0);
    expect(exported.stdout.join('\n').trim().split('\n')).toHaveLength(4);
  });

  it('reads a live WAL log in place through its existing -shm, commits in the -wal included', async () => {
    const ledger = createLedger({ clock: clock.now, store: sqliteStore({ path: inView('open.sqlite'), readonly: true }) });
    try {
      expect(ledger.events()).toHaveLength(4);
    } finally {
      await ledger.close();
    }
  });

  it('refuses a log whose -wal holds commits it cannot apply without writing, naming the -wal', () => {
    expect(statSync(tmp.file('stale.sqlite-wal')).size).toBeGreaterThan(0);
    expect(() => sqliteStore({ path: inView('stale.sqlite'), readonly: true })).toThrow(
      expect.objectContaining({ code: 'store_failed', message: expect.stringContaining('stale.sqlite-wal') }) as Error,
    );
  });

  it('refuses a file over readonlyCopyMaxBytes rather than reading it into memory', () => {
    expect(() => sqliteStore({ path: inView('closed.sqlite'), readonly: true, readonlyCopyMaxBytes: 1_024 })).toThrow(
      expect.objectContaining({ code: 'store_failed', message: expect.stringContaining('over the 1024-byte limit') }) as Error,
    );
  });

  it('without readonly: true still refuses to open (no silent read-only copy for a writer)', () => {
    expect(() => sqliteStore({ path: inView('closed.sqlite') })).toThrow(expect.objectContaining({ code: 'store_failed' }) as Error);
  });
});

it('readonlyCopyMaxBytes must be a non-negative integer', () => {
  expect(() => sqliteStore({ path: ':memory:', readonlyCopyMaxBytes: -1 })).toThrow(TypeError);
  expect(() => sqliteStore({ path: ':memory:', readonlyCopyMaxBytes: 1.5 })).toThrow(TypeError);
});

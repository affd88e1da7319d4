import { closeSync, openSync, readFileSync, renameSync, copyFileSync, writeSync } from 'node:fs';
import http from 'node:http';
import { createLedger, sqliteStore } from '../../src';
import { startAuditServer } from '../../src/web/server/auditServer';
import { sqliteLogReader } from '../../src/web/server/sqliteLogReader';
import { sqliteTempDir } from '../support/sqliteFiles';

/**
 * Issue 30, "also in scope": `atc serve` kept showing "verified" after one byte of the SQLite file
 * was edited outside SQLite, reload or not. Its long-lived connection served the pages it had cached:
 * SQLite revalidates them only by its own change counter (or WAL index), which such an edit leaves
 * alone. The page's re-check (`/bodies`, its sweep; a reload's `/events`) must see the file on disk.
 */
const tmp = sqliteTempDir();
afterAll(() => tmp.cleanup());

function get(target: string): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get(target, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve(text));
      })
      .on('error', reject);
  });
}

/** A checkpointed log (no -wal left) whose event 2 carries `marker` in its body. */
async function logWith(name: string, marker: string): Promise<string> {
  const file = tmp.file(name);
  const ledger = createLedger({ store: sqliteStore({ path: file }) });
  await ledger.registerTool({ name: 'echo', inputSchema: { type: 'object' }, run: () => null });
  await ledger.issue({ tools: ['echo'], expiresAt: Date.now() + 3_600_000, budget: { calls: 1, inputBytes: 1_000 }, resources: [`fs:/${marker}/`] });
  await ledger.close();
  return file;
}

/** Flips one byte of every copy of `marker` in the file, as an editor outside SQLite would. */
function editOnDisk(file: string, marker: string): void {
  const bytes = readFileSync(file);
  const fd = openSync(file, 'r+');
  try {
    let found = 0;
    for (let at = bytes.indexOf(marker); at >= 0; at = bytes.indexOf(marker, at + 1), found++) writeSync(fd, Buffer.from('Z'), 0, 1, at);
    expect(found).toBeGreaterThan(0);
  } finally {
    closeSync(fd);
  }
}

describe('atc serve after the SQLite file was edited outside SQLite', () => {
  it('serves the edited bytes on the next read: the page’s re-check sees the file on disk', async () => {
    const marker = 'marker-5d1c0e';
    const file = await logWith('edited.sqlite', marker);
    const server = await startAuditServer({ reader: sqliteLogReader(file) });
    try {
      const first = await get(`${server.url}bodies?after=0&limit=500`);
      expect(first).toContain(marker);
      editOnDisk(file, marker);
      const second = await get(`${server.url}bodies?after=0&limit=500`);
      expect(second).not.toContain(marker);
      expect(second).toContain(`Z${marker.slice(1)}`);
    } finally {
      await server.close();
    }
  });

  it('serves the file now at the path when it was replaced', async () => {
    const file = await logWith('replaced.sqlite', 'first-log-3a9f');
    const other = await logWith('other.sqlite', 'other-log-b27c');
    const reader = sqliteLogReader(file);
    try {
      expect(JSON.stringify(await reader.bodiesAfter(0, 500))).toContain('first-log-3a9f');
      copyFileSync(other, `${file}.new`);
      renameSync(`${file}.new`, file);
      const now = JSON.stringify(await reader.bodiesAfter(0, 500));
      expect(now).toContain('other-log-b27c');
      expect(now).not.toContain('first-log-3a9f');
    } finally {
      await reader.close();
    }
  });
});

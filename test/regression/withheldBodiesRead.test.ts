import { readFileSync } from 'node:fs';
import net from 'node:net';
import Database from 'better-sqlite3';
import { Pool } from 'pg';
import { createLedger, openLedger, sqliteStore } from '../../src';
import { postgresStore } from '../../src/postgres';
import { dataLine } from '../../src/web/server/eventStream';
import { storedBodyBytesMax } from '../../src/web/server/logReader';
import { postgresLogReader } from '../../src/web/server/postgresLogReader';
import { sqliteLogReader } from '../../src/web/server/sqliteLogReader';
import { describePg, freshSchema, url } from '../support/pgTest';
import { sqliteTempDir } from '../support/sqliteFiles';

/**
 * Issue 30, class 9: `atc serve` read withheld bodies whole. A body over the bound is sent as
 * `<seq> ?`, but the readers fetched it first: six requests over 60 rows of 5 MB raised the server's
 * peak memory by 0.6–0.9 GB. Counted here as bytes, not memory or time: what the process reads from
 * the SQLite file (the kernel's `rchar`), and what the PostgreSQL server sends it.
 */
const bigRows = 5;
const bigBody = `{"pad":"${'x'.repeat(5 * 1024 * 1024)}"}`;
/** Far below one big body, far above the small rows and pages a read needs. */
const readBytesMax = 1024 * 1024;

function bytesReadByThisProcess(): number {
  const line = readFileSync('/proc/self/io', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('rchar:'));
  return Number(line?.split(/\s+/)[1]);
}

/** Rows as the audit view sends them, the big ones withheld and the small ones whole. */
function expectWithheld(rows: readonly { seq: number; body: string | undefined }[], small: number): void {
  expect(rows).toHaveLength(small + bigRows);
  expect(rows.slice(0, small).every((r) => typeof r.body === 'string' && r.body.length < storedBodyBytesMax)).toBe(true);
  expect(rows.slice(small).map((r) => r.body)).toEqual(Array(bigRows).fill(undefined));
  expect(rows.slice(small).map(dataLine)).toEqual(rows.slice(small).map((r) => `${r.seq} ?`));
}

const insertBig = (seq: number): string => `INSERT INTO events (seq, type, at, hash, prev_hash, body) VALUES (${seq}, 'x', 0, '${'a'.repeat(64)}', '${'a'.repeat(64)}', '${bigBody}')`;

describe('atc serve on a SQLite log with bodies over the bound', () => {
  const tmp = sqliteTempDir();
  afterAll(() => tmp.cleanup());

  it('reads none of a withheld body from the file', async () => {
    const file = tmp.file('big.sqlite');
    const ledger = createLedger({ store: sqliteStore({ path: file }) });
    await ledger.registerTool({ name: 'echo', inputSchema: { type: 'object' }, run: () => null });
    await ledger.close();
    const db = new Database(file);
    for (let i = 0; i < bigRows; i++) db.exec(insertBig(2 + i));
    db.close();

    const reader = sqliteLogReader(file);
    try {
      const before = bytesReadByThisProcess();
      const rows = await reader.bodiesAfter(0, 500);
      const read = bytesReadByThisProcess() - before;
      expectWithheld(rows, 1);
      expect(read).toBeLessThan(readBytesMax); // 26 MB before
    } finally {
      await reader.close();
    }
  });
});

describePg('atc serve on a PostgreSQL log with bodies over the bound', () => {
  it('is sent none of a withheld body by the server', async () => {
    const schema = freshSchema('withheld');
    const ledger = await openLedger({ store: postgresStore({ connectionString: url(), schema }) });
    await ledger.registerTool({ name: 'echo', inputSchema: { type: 'object' }, run: () => null });
    await ledger.close();
    const admin = new Pool({ connectionString: url(), max: 1 });
    for (let i = 0; i < bigRows; i++) await admin.query(`SET search_path TO ${schema}; ${insertBig(2 + i)}`);
    await admin.end();

    // A TCP relay between the reader and the server, counting what the server sends.
    let received = 0;
    const target = new URL(url());
    const relay = net.createServer((client) => {
      const upstream = net.connect(Number(target.port), target.hostname);
      upstream.on('data', (chunk: Buffer) => (received += chunk.length));
      client.pipe(upstream).pipe(client);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const relayed = new URL(url());
    relayed.port = String((relay.address() as net.AddressInfo).port);
    const reader = await postgresLogReader(relayed.toString(), schema);
    try {
      const before = received;
      const rows = await reader.bodiesAfter(0, 500);
      expectWithheld(rows, 1);
      expect(received - before).toBeLessThan(readBytesMax); // 26 MB before
    } finally {
      await reader.close();
      relay.close();
    }
  });
});

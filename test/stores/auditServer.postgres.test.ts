import http from 'node:http';
import { Pool } from 'pg';
import { openLedger } from '../../src';
import { startServe } from '../../src/cli/commands/serve';
import { postgresStore } from '../../src/postgres';
import { parseEventsData } from '../../src/web/page/logLines';
import { launchChromium } from '../support/chromium';
import { describePg, freshSchema, url } from '../support/pgTest';
import { captureIo } from '../support/sqliteFiles';

// atc serve on a PostgreSQL log: the same stream and page as for SQLite, through a read-only session.
jest.setTimeout(120_000);

function get(target: string, method = 'GET'): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(target, { method }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        text += c;
        if (text.includes('event: caughtUp')) {
          req.destroy();
          resolve({ status: res.statusCode ?? 0, text });
        }
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' ? undefined : reject(e)));
    req.end();
  });
}

describePg('atc serve on a PostgreSQL log', () => {
  const schema = freshSchema('serve');
  let bodies: string[];

  beforeAll(async () => {
    const ledger = await openLedger({ store: postgresStore({ connectionString: url(), schema }) });
    await ledger.registerTool({ name: 'notes.write', inputSchema: { type: 'object', properties: { text: { type: 'string' } } }, run: () => 'ok' });
    const grant = await ledger.issue({ tools: ['notes.write'], expiresAt: Date.now() + 3_600_000, budget: { calls: 1, inputBytes: 1_000 } });
    await ledger.invoke(grant.token, 'notes.write', { text: 'pg-secret-argument' });
    await ledger.invoke(grant.token, 'notes.write', { text: 'again' });
    await ledger.close();
    const pool = new Pool({ connectionString: url(), max: 1 });
    bodies = (await pool.query<{ body: string }>(`SELECT body FROM ${schema}.events ORDER BY seq`)).rows.map((r) => r.body);
    await pool.end();
  });

  it('streams the stored bodies verbatim, refuses writes, and the page verifies the chain', async () => {
    const io = captureIo();
    const started = await startServe([url(), '--schema', schema], io);
    if (typeof started === 'number') throw new Error(io.stderr.join('\n'));
    try {
      expect(io.stdout).toEqual([`listening on ${started.url}`]);
      const stream = await get(`${started.url}events`);
      const events = stream.text
        .split('\n\n')
        .filter((m) => m.startsWith('event: events'))
        .flatMap((m) => parseEventsData(m.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n')));
      expect(events.map((e) => e.text)).toEqual(bodies);
      expect(stream.text).not.toContain('pg-secret-argument');
      expect((await get(started.url, 'POST')).status).toBe(405);

      const browser = await launchChromium();
      try {
        const page = await browser.context.newPage();
        await page.goto(started.url);
        await page.locator(`#integrity[data-state="ok"][data-verified-through="${bodies.length}"]`).waitFor({ timeout: 15_000 });
        await expect(page.locator('#row-count').textContent()).resolves.toBe('2 of 2 decisions');
      } finally {
        await browser.close();
      }
    } finally {
      await started.close();
    }
  });

  it('fails at start, with the password redacted, when the schema holds no log', async () => {
    const io = captureIo();
    const withPassword = url().replace('postgres@', 'postgres:hunter2@');
    expect(await startServe([withPassword, '--schema', 'no_such_schema'], io)).toBe(2);
    expect(io.stderr.join('\n')).toMatch(/cannot read the PostgreSQL log/);
    expect(io.stderr.join('\n')).not.toContain('hunter2');
  });
});

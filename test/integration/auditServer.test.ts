import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import Database from 'better-sqlite3';
import path from 'node:path';
import readline from 'node:readline';
import { createLedger, sqliteStore, type Ledger } from '../../src';
import { startServe } from '../../src/cli/commands/serve';
import { startAuditServer, type AuditServer } from '../../src/web/server/auditServer';
import { isLoopbackHost } from '../../src/web/server/loopback';
import { sqliteLogReader } from '../../src/web/server/sqliteLogReader';
import { streamPageEventsMax } from '../../src/web/server/eventStream';
import { parseEventsData } from '../../src/web/page/logLines';
import { captureIo, sqliteTempDir } from '../support/sqliteFiles';

const tmp = sqliteTempDir();
afterAll(() => tmp.cleanup());
const root = path.resolve(__dirname, '..', '..');
// Argument values no response may contain (the log stores only their byte counts).
const secretArgs = ['argument-value-7f3a9c', 'another-secret-b81d2e'];

interface Log {
  file: string;
  ledger: Ledger;
  tokens: string[];
}

async function makeLog(name: string, extraCalls = 0): Promise<Log> {
  const file = tmp.file(name);
  const ledger = createLedger({ store: sqliteStore({ path: file }) });
  await ledger.registerTool({ name: 'notes.write', inputSchema: { type: 'object', properties: { path: { type: 'string' }, text: { type: 'string' } } }, run: () => 'ok' });
  const a = await ledger.issue({ tools: ['notes.write'], expiresAt: Date.now() + 3_600_000, budget: { calls: 1_000_000, inputBytes: 100_000_000 } });
  await ledger.invoke(a.token, 'notes.write', { path: secretArgs[0] as string, text: secretArgs[1] as string });
  await ledger.invoke('atc_not-a-real-token', 'notes.write', { path: secretArgs[0] as string });
  for (let i = 0; i < extraCalls; i++) await ledger.invoke(a.token, 'notes.write', { path: `p${i}` });
  return { file, ledger, tokens: [a.token] };
}

function request(url: string, options: http.RequestOptions = {}, body?: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Reads /events until the `caughtUp` message (or a predicate on the text so far), then hangs up. */
function readStream(url: string, headers: http.OutgoingHttpHeaders = {}, until: (text: string) => boolean = (t) => t.includes('event: caughtUp')): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${url}events`, { headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        if (until(text)) {
          req.destroy();
          resolve(text);
        }
      });
    });
    req.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' ? undefined : reject(e)));
  });
}

function eventsIn(stream: string): { seq: number; text: string | undefined }[] {
  return stream
    .split('\n\n')
    .filter((m) => m.startsWith('event: events'))
    .flatMap((m) => parseEventsData(m.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n')));
}

function storedBodies(file: string): string[] {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare('SELECT body FROM events ORDER BY seq').all() as { body: string }[]).map((r) => r.body);
  } finally {
    db.close();
  }
}

describe('atc serve: the audit server', () => {
  let log: Log;
  let server: AuditServer;
  beforeAll(async () => {
    log = await makeLog('serve.sqlite');
    server = await startAuditServer({ reader: sqliteLogReader(log.file), timing: { pollMs: 20 } });
  });
  afterAll(async () => {
    await server.close();
    await log.ledger.close();
  });

  it('listens on loopback (127.0.0.1) by default', () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
  });

  it.each(['/', '/app.js', '/app.css', '/events', '/checkpoint.json', '/nowhere'])('sends the security headers with %s', async (route) => {
    const { headers } = await request(new URL(route, server.url).href, { method: 'HEAD' });
    const csp = headers['content-security-policy'] as string;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
    expect(headers['x-frame-options']).toBe('DENY');
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(headers['referrer-policy']).toBe('no-referrer');
  });

  it('serves the bundled page, which has no inline script or style and loads nothing from another origin', async () => {
    const page = await request(server.url);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<script src="/app.js" defer></script>');
    expect(page.text).not.toMatch(/<script>|<script [^>]*>[^<]|<style|style=|\son[a-z]+=|https?:\/\//);
    const script = await request(`${server.url}app.js`);
    expect(script.headers['content-type']).toMatch(/^text\/javascript/);
    // Every dependency is inside (the browser test also checks that no request leaves the origin).
    expect(script.text).toContain('uplot');
    expect(script.text).not.toMatch(/unpkg|jsdelivr|cdnjs|googleapis|\bimport\(/);
  });

  it.each(['POST', 'PUT', 'PATCH', 'DELETE'])('refuses %s on every route and changes nothing', async (method) => {
    const before = storedBodies(log.file);
    for (const route of ['/', '/events', '/issue', '/revoke', '/invoke']) {
      const res = await request(new URL(route, server.url).href, { method, headers: { 'Content-Type': 'application/json' } }, '{"tools":["notes.write"]}');
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('GET, HEAD');
    }
    expect(storedBodies(log.file)).toEqual(before);
  });

  it('refuses a Host header that is not this loopback address (DNS rebinding)', async () => {
    expect((await request(server.url, { headers: { Host: `evil.example:${server.port}` } })).status).toBe(403);
    expect((await request(server.url, { headers: { Host: `localhost:${server.port}` } })).status).toBe(200);
  });

  it('streams every stored body exactly as stored, then says it caught up at the head', async () => {
    const stream = await readStream(server.url);
    expect(eventsIn(stream).map((e) => e.text)).toEqual(storedBodies(log.file));
    expect(stream).toMatch(/event: caughtUp\ndata: \{"headSeq":\d+\}/);
  });

  it('resumes after Last-Event-ID, as a reconnecting EventSource asks', async () => {
    const all = storedBodies(log.file);
    const stream = await readStream(server.url, { 'Last-Event-ID': '3' });
    expect(eventsIn(stream).map((e) => e.seq)).toEqual(all.map((_, i) => i + 1).filter((s) => s > 3));
  });

  it('streams events other writers append after the page connected', async () => {
    const head = storedBodies(log.file).length;
    const other = createLedger({ store: sqliteStore({ path: log.file }) });
    const streamed = readStream(server.url, {}, (t) => eventsIn(t).some((e) => e.seq === head + 2));
    await other.invoke('atc_unknown', 'notes.write', {});
    await other.invoke('atc_unknown', 'notes.write', {});
    await other.close();
    expect(eventsIn(await streamed).map((e) => e.seq).slice(-2)).toEqual([head + 1, head + 2]);
  });

  it('no response carries a token or an argument value', async () => {
    const texts = [
      (await request(server.url)).text,
      (await request(`${server.url}app.js`)).text,
      (await request(`${server.url}app.css`)).text,
      (await request(`${server.url}checkpoint.json`)).text,
      await readStream(server.url),
    ];
    for (const text of texts) for (const secret of [...log.tokens, 'atc_not-a-real-token', ...secretArgs]) expect(text).not.toContain(secret);
  });

  it('/bodies?after=N&limit=L sends the stored bodies after N as the stream does, at most L, for the page to re-check', async () => {
    const bodies = storedBodies(log.file);
    const all = await request(`${server.url}bodies?after=0&limit=500`);
    expect(all.status).toBe(200);
    expect(all.headers['content-security-policy']).toContain("default-src 'none'");
    expect(parseEventsData(all.text).map((e) => e.text)).toEqual(bodies);
    const page = parseEventsData((await request(`${server.url}bodies?after=2&limit=2`)).text);
    expect(page).toEqual([{ seq: 3, text: bodies[2] }, { seq: 4, text: bodies[3] }]);
    for (const secret of [...log.tokens, ...secretArgs]) expect(all.text).not.toContain(secret);
    for (const query of ['after=-1', 'after=x', 'limit=0', 'limit=501', 'after=1&limit=1e3']) expect({ query, status: (await request(`${server.url}bodies?${query}`)).status }).toEqual({ query, status: 400 });
  });
});

describe('atc serve: long logs and limits', () => {
  it('pages a log longer than one message without losing or repeating an event', async () => {
    const log = await makeLog('long.sqlite', streamPageEventsMax);
    const server = await startAuditServer({ reader: sqliteLogReader(log.file) });
    try {
      const seqs = eventsIn(await readStream(server.url)).map((e) => e.seq);
      expect(seqs).toEqual(storedBodies(log.file).map((_, i) => i + 1));
      expect(seqs.length).toBeGreaterThan(streamPageEventsMax * 2);
    } finally {
      await server.close();
      await log.ledger.close();
    }
  });

  it('refuses more concurrent streams than streamsMax with 503', async () => {
    const log = await makeLog('streams.sqlite');
    const server = await startAuditServer({ reader: sqliteLogReader(log.file), streamsMax: 1 });
    try {
      const first = http.get(`${server.url}events`);
      await new Promise((r) => first.once('response', r));
      expect((await request(`${server.url}events`)).status).toBe(503);
      first.destroy();
    } finally {
      await server.close();
      await log.ledger.close();
    }
  });
});

describe('atc serve: the command line', () => {
  it('knows which hosts are loopback', () => {
    expect(['127.0.0.1', '127.3.4.5', '::1', '[::1]', 'localhost'].every(isLoopbackHost)).toBe(true);
    expect(['0.0.0.0', '::', '10.0.0.1', '192.168.1.2', 'example.com', '128.0.0.1'].some(isLoopbackHost)).toBe(false);
  });

  it('refuses a non-loopback --host without --allow-remote, and starts nothing', async () => {
    const io = captureIo();
    expect(await startServe([tmp.file('none.sqlite'), '--host', '0.0.0.0'], io)).toBe(2);
    expect(io.stderr.join('\n')).toMatch(/not a loopback address; add --allow-remote/);
    expect(io.stdout).toEqual([]);
  });

  it('with --allow-remote serves on that host and prints a warning', async () => {
    const log = await makeLog('remote.sqlite');
    const io = captureIo();
    const started = await startServe([log.file, '--host', '0.0.0.0', '--allow-remote'], io);
    if (typeof started === 'number') throw new Error(io.stderr.join('\n'));
    try {
      expect(io.stderr.join('\n')).toMatch(/WARNING: serving on 0\.0\.0\.0, which is not loopback/);
      expect(io.stdout).toEqual([`listening on http://0.0.0.0:${started.port}/`]);
    } finally {
      await started.close();
      await log.ledger.close();
    }
  });

  it('fails with exit 2 for a missing log file', async () => {
    const io = captureIo();
    expect(await startServe([tmp.file('missing.sqlite')], io)).toBe(2);
    expect(io.stderr.join('\n')).toMatch(/cannot open the SQLite log/);
  });

  it('npx atc serve prints "listening on http://127.0.0.1:PORT/" and serves until SIGTERM', async () => {
    const log = await makeLog('cli.sqlite');
    const child = spawn(process.execPath, [path.join(root, 'dist/src/cli/main.js'), 'serve', log.file, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const line = await new Promise<string>((resolve) => readline.createInterface({ input: child.stdout }).once('line', resolve));
      expect(line).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+\/$/);
      const url = line.slice('listening on '.length);
      expect((await request(url)).status).toBe(200);
    } finally {
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      await log.ledger.close();
    }
  });

  it('the package ships the bundle (package.json files lists dist/web)', () => {
    expect((JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { files: string[] }).files).toContain('dist/web');
  });
});

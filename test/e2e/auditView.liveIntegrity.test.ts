import { mkdirSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { startLogWriter, startServeProcess } from '../support/auditProcesses';
import { launchChromium } from '../support/chromium';
import { formatCheckpointBody } from '../../src/transparency/checkpoint';
import { rootOfEventHashes } from '../../src/transparency/eventLeaves';
import { merkleHasher } from '../../src/transparency/merkleHasher';
import { nodeCrypto } from '../../src/transparency/nodeCrypto';
import { formatVerifierKey, generateSignerKey, signNote, verifierKeyOf } from '../../src/transparency/noteKeys';
import { sqliteTempDir, tamper } from '../support/sqliteFiles';

// Issue 17's "tamper with the log file and see the page report the bad seq", live: the page is open,
// has verified the whole log (and a checkpoint of it), and then someone edits the file. The page's
// sweep re-reads the log and reports the bad seq without a reload. Screenshots go to build/screenshots/.
jest.setTimeout(120_000);
const screenshots = path.resolve(__dirname, '..', '../build/screenshots');
mkdirSync(screenshots, { recursive: true });
const tmp = sqliteTempDir();
afterAll(() => tmp.cleanup());
const waitMs = 15_000;
const integrity = (page: Page, name: string): Promise<string | null> => page.locator('#integrity').getAttribute(`data-${name}`);

describe('the audit page re-checks events it already verified, live', () => {
  const file = tmp.file('live.sqlite');
  let serve: Awaited<ReturnType<typeof startServeProcess>>;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let page: Page;
  let loads = 0;

  beforeAll(async () => {
    const writer = startLogWriter(file);
    await writer.send({ op: 'setup' }); // seq 1-5
    await writer.send({ op: 'invoke', grant: 'A', tool: 'notes.write', args: { path: 'drafts/a', text: 'x' } }); // 6, 7
    await writer.send({ op: 'invoke', grant: 'A', tool: 'notes.read', args: { path: 'drafts/a' } }); // 8, 9
    await writer.send({ op: 'invoke', grant: 'B', tool: 'notes.write', args: { path: 'x', text: 'y' } }); // 10 (rejected)
    await writer.send({ op: 'invoke', grant: 'B', tool: 'notes.read', args: { path: 'b' } }); // 11, 12
    await writer.send({ op: 'close' });
    await writer.stop();
    // A checkpoint of the whole log (12 events), signed, and its verifier key: the page checks both.
    const key = generateSignerKey(nodeCrypto, 'example.com/live');
    const db = new Database(file, { readonly: true });
    const hashes = (db.prepare('SELECT hash FROM events ORDER BY seq').all() as { hash: string }[]).map((r) => r.hash);
    db.close();
    expect(hashes).toHaveLength(12);
    const checkpoint = tmp.file('live.checkpoint');
    writeFileSync(checkpoint, signNote(nodeCrypto, key, formatCheckpointBody({ origin: key.name, size: 12, root: rootOfEventHashes(merkleHasher(nodeCrypto), hashes).root })));
    const vkey = tmp.file('live.vkey');
    writeFileSync(vkey, `${formatVerifierKey(verifierKeyOf(key))}\n`);
    serve = await startServeProcess(file, ['--checkpoint', checkpoint, '--vkey', `@${vkey}`]);
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on('load', () => void loads++);
    await page.goto(serve.url);
    await page.locator('#integrity[data-state="ok"][data-verified-through="12"][data-checkpoint="consistent"]').waitFor({ timeout: waitMs });
  });
  afterAll(async () => {
    await browser?.close();
    await serve?.stop();
  });

  it('reports an event deleted from the log after it was verified, as the first bad seq, without a reload', async () => {
    tamper(file, 'DELETE FROM snapshots; DELETE FROM events WHERE seq = 12', { dropTriggers: true });
    await page.locator('#integrity[data-state="bad"]').waitFor({ timeout: waitMs });
    expect(await integrity(page, 'first-bad-seq')).toBe('12');
    expect(await integrity(page, 'verified-through')).toBe('11');
    await expect(page.locator('#integrity').textContent()).resolves.toMatch(/first bad seq 12.*gone from the log/);
    // The checkpoint of 12 events no longer holds for what the page now trusts.
    await page.locator('#integrity[data-checkpoint="inconsistent"]').waitFor({ timeout: waitMs });
    expect(loads).toBe(1);
  });

  it('moves the first bad seq back to an earlier event edited after it was verified', async () => {
    // seq 6 is A's first admission: make it reserve nothing, as someone hiding a call would.
    tamper(file, `UPDATE events SET body = replace(body, '"calls":1', '"calls":0') WHERE seq = 6`);
    await page.locator('#integrity[data-first-bad-seq="6"]').waitFor({ timeout: waitMs });
    expect(await integrity(page, 'verified-through')).toBe('5');
    await expect(page.locator('#integrity').textContent()).resolves.toMatch(/first bad seq 6.*changed since this page verified it/);
    await expect(page.locator('#integrity .cp').textContent()).resolves.toMatch(/seq 6 of its tree changed/);
    expect(loads).toBe(1);
    await page.screenshot({ path: path.join(screenshots, 'tampered-live.png'), clip: { x: 0, y: 0, width: 1400, height: 180 } });
  });
});

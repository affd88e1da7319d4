import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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

// The audit page in a real browser (Debian's chromium): `atc serve` on a log that another process
// keeps writing. Screenshots go to build/screenshots/ for a person to look at.
jest.setTimeout(120_000);
const screenshots = path.resolve(__dirname, '..', '../build/screenshots');
mkdirSync(screenshots, { recursive: true });
const tmp = sqliteTempDir();
afterAll(() => tmp.cleanup());

interface Grants {
  A: { grantId: string; token: string };
  B: { grantId: string; token: string };
}

const waitMs = 15_000;
const rowCount = (page: Page): Promise<number> => page.locator('#decisions .row:not([hidden])').count();
const integrity = (page: Page, name: string): Promise<string | null> => page.locator('#integrity').getAttribute(`data-${name}`);
const gauge = (page: Page, grantId: string, key: string) => page.locator(`#budgets [data-grant="${grantId}"] [data-gauge="${key}"]`);

describe('atc serve in a browser', () => {
  const file = tmp.file('browser.sqlite');
  const writer = startLogWriter(file);
  let grants: Grants;
  let serve: Awaited<ReturnType<typeof startServeProcess>>;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let page: Page;
  const requests: string[] = [];
  const problems: string[] = [];

  beforeAll(async () => {
    grants = (await writer.send({ op: 'setup' })).grants as Grants;
    // seq 1-3 tools, 4-5 grants; then A admitted twice (seq 6, 8; each settled right after), B
    // tool_not_granted (10), an unknown token (11), B admitted (12, settled at 13).
    await writer.send({ op: 'invoke', grant: 'A', tool: 'notes.write', args: { path: 'drafts/a', text: 'first secret text' } });
    await writer.send({ op: 'invoke', grant: 'A', tool: 'notes.read', args: { path: 'drafts/a' } });
    await writer.send({ op: 'invoke', grant: 'B', tool: 'notes.write', args: { path: 'x', text: 'y' } });
    await writer.send({ op: 'invoke', grant: 'none', tool: 'notes.write', args: {} });
    await writer.send({ op: 'invoke', grant: 'B', tool: 'notes.read', args: { path: 'b' } });
    serve = await startServeProcess(file);
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on('request', (r) => requests.push(r.url()));
    page.on('console', (m) => void (m.type() === 'error' && problems.push(m.text())));
    page.on('pageerror', (e) => problems.push(String(e)));
    await page.goto(serve.url);
    await page.locator('#integrity[data-state="ok"]').waitFor({ timeout: waitMs });
  });
  afterAll(async () => {
    await browser?.close();
    await serve?.stop();
    await writer.stop();
  });

  it('shows every decision of the log and verifies the chain through its head, computed in the page', async () => {
    // The badge can turn ok before the table is drawn: wait for the fifth row, then count them all.
    await page.locator('#decisions .row:not([hidden])').nth(4).waitFor({ timeout: waitMs });
    expect(await rowCount(page)).toBe(5);
    expect(await integrity(page, 'verified-through')).toBe('13');
    await expect(page.locator('#integrity').textContent()).resolves.toMatch(/verified through seq 13/);
    await page.locator('#budgets .card').nth(1).waitFor({ timeout: waitMs });
    await page.locator('#reasons-chart canvas').waitFor({ timeout: waitMs });
    await page.screenshot({ path: path.join(screenshots, 'overview.png'), fullPage: true });
  });

  it('the budgets panel grows with its cards: no inner scroll hides a grant (the page scrolls instead)', async () => {
    await page.locator('#budgets .card').nth(1).waitFor({ timeout: waitMs });
    const box = await page.locator('#budgets').evaluate((e) => {
      const style = (globalThis as unknown as { getComputedStyle(element: unknown): { overflowY: string; maxHeight: string } }).getComputedStyle(e);
      return { overflowY: style.overflowY, maxHeight: style.maxHeight, hidden: e.scrollHeight - e.clientHeight };
    });
    expect(box).toEqual({ overflowY: 'visible', maxHeight: 'none', hidden: 0 });
  });

  it('shows decisions another process appends while the page is open', async () => {
    const appendedAt = Date.now();
    await writer.send({ op: 'invoke', grant: 'B', tool: 'notes.read', args: { path: 'c' } });
    await writer.send({ op: 'invoke', grant: 'B', tool: 'notes.read', args: { path: 'd' } });
    await writer.send({ op: 'invoke', grant: 'B', tool: 'notes.read', args: { path: 'e' } }); // over B's 3 calls: rejected
    await page.locator('#decisions .row[data-seq="18"]').waitFor({ timeout: waitMs });
    // Reported, not asserted: the stream polls every 250 ms (see docs/audit.md).
    process.stdout.write(`audit view: appended decisions shown after ${Date.now() - appendedAt} ms\n`);
    await expect(page.locator('#decisions .row[data-seq="18"] .c-reason').textContent()).resolves.toBe('call_budget_exhausted');
    await page.locator('#integrity[data-verified-through="18"]').waitFor({ timeout: waitMs });
    // B's rate window (10 calls per hour): its three admissions, the rejected fourth not among them.
    await page.locator(`#budgets [data-grant="${grants.B.grantId}"] [data-gauge="rate"][data-used="3"][data-limit="10"]`).waitFor({ timeout: waitMs });
    await expect(gauge(page, grants.B.grantId, 'rate').locator('.g-label').textContent()).resolves.toBe('calls per 1 h');
  });

  it('filters by decision and reflects the filter in the URL', async () => {
    await page.selectOption('#f-decision', 'rejected');
    expect(new URL(page.url()).search).toBe('?decision=rejected');
    await expect(page.locator('#decisions .row:not([hidden]) .c-decision').allTextContents()).resolves.toEqual(['rejected', 'rejected', 'rejected']);
    await expect(page.locator('#row-count').textContent()).resolves.toBe('3 of 8 decisions');
    await page.screenshot({ path: path.join(screenshots, 'filtered.png'), fullPage: false });
  });

  it('exports the filtered rows as JSON Lines, the stored bodies as they are', async () => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export')]);
    expect(download.suggestedFilename()).toBe('decisions.jsonl');
    const lines = readFileSync(await download.path(), 'utf8').trimEnd().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { type: string; seq: number }).seq)).toEqual([10, 11, 18]);
    expect(lines.every((l) => (JSON.parse(l) as { type: string }).type === 'call.rejected')).toBe(true);
  });

  it('opens with the filters a URL names (grant and tool), and the budgets panel follows the grant filter', async () => {
    await page.goto(`${serve.url}?grant=${grants.A.grantId}&tool=notes.write`);
    await page.locator('#integrity[data-state="ok"]').waitFor({ timeout: waitMs });
    await expect(page.locator('#decisions .row:not([hidden])').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-seq')))).resolves.toEqual(['6']);
    await expect(page.locator('#f-grant').inputValue()).resolves.toBe(grants.A.grantId);
    await page.locator(`#budgets .card[data-grant="${grants.A.grantId}"]`).waitFor({ timeout: waitMs });
    await expect(page.locator('#budgets .card').count()).resolves.toBe(1);
    await page.click('#f-clear');
    expect(new URL(page.url()).search).toBe('');
  });

  it('moves a budget gauge when calls are admitted, and shows a running call apart as in flight', async () => {
    const calls = gauge(page, grants.A.grantId, 'calls');
    await calls.waitFor({ timeout: waitMs });
    expect(await calls.getAttribute('data-used')).toBe('2');
    await writer.send({ op: 'invoke', grant: 'A', tool: 'notes.write', args: { path: 'drafts/b', text: 'more' } });
    await page.locator(`#budgets [data-grant="${grants.A.grantId}"] [data-gauge="calls"][data-used="3"]`).waitFor({ timeout: waitMs });
    await writer.send({ op: 'hold', grant: 'A' });
    await page.locator(`#budgets [data-grant="${grants.A.grantId}"] [data-gauge="calls"][data-used="4"][data-inflight="1"]`).waitFor({ timeout: waitMs });
    await expect(calls.locator('.g-text').textContent()).resolves.toBe('4 / 6 (1 in flight)');
    await expect(page.locator(`#grant-tree [data-grant="${grants.A.grantId}"] .running`).textContent()).resolves.toBe('1 running');
    await page.locator('#budgets').screenshot({ path: path.join(screenshots, 'budgets.png') });
    await writer.send({ op: 'release' });
    await page.locator(`#budgets [data-grant="${grants.A.grantId}"] [data-gauge="calls"][data-used="4"][data-inflight="0"]`).waitFor({ timeout: waitMs });
  });

  it('lists a running call with a timeout under its grant, counting down to its deadline', async () => {
    const grantId = (await writer.send({ op: 'issueTimed', name: 'T', callTimeoutMs: 3_600_000 })).grantId as string;
    await writer.send({ op: 'hold', grant: 'T' });
    const selector = `#budgets [data-grant="${grantId}"] .pending li[data-deadline]`;
    const call = page.locator(selector);
    try {
      await call.waitFor({ timeout: waitMs });
      await expect(call.locator('.left').textContent()).resolves.toMatch(/^(59 min \d+ s|1 h 0 min) left$/);
      const first = Number(await call.getAttribute('data-left-ms'));
      // The page's clock moves it with no new event: a second later it says less.
      const later = page.locator(`${selector}:not([data-left-ms="${first}"])`);
      await later.waitFor({ timeout: waitMs });
      expect(Number(await later.getAttribute('data-left-ms'))).toBeLessThan(first);
    } finally {
      // The writer's close waits for running calls: never leave this one held for the later tests.
      await writer.send({ op: 'release' });
    }
    await call.waitFor({ state: 'detached', timeout: waitMs });
  });

  it('marks a revoked grant in the tree', async () => {
    await writer.send({ op: 'revoke', grant: 'B' });
    await page.locator(`#grant-tree [data-grant="${grants.B.grantId}"][data-status="revoked"]`).waitFor({ timeout: waitMs });
  });

  it('nests a delegated grant under its parent, rolls its use up, and marks the subtree when the parent is revoked', async () => {
    const child = (await writer.send({ op: 'attenuate', parent: 'A', name: 'C', budget: { calls: 2 } })).grantId as string;
    await page.locator(`#grant-tree [data-grant="${grants.A.grantId}"] > ul > [data-grant="${child}"]`).waitFor({ timeout: waitMs });
    const parentUsed = Number(await gauge(page, grants.A.grantId, 'calls').getAttribute('data-used'));
    await writer.send({ op: 'invoke', grant: 'C', tool: 'notes.read', args: { path: 'drafts/c' } });
    await page.locator(`#budgets [data-grant="${child}"] [data-gauge="calls"][data-used="1"]`).waitFor({ timeout: waitMs });
    await page.locator(`#budgets [data-grant="${grants.A.grantId}"] [data-gauge="calls"][data-used="${parentUsed + 1}"]`).waitFor({ timeout: waitMs });
    await writer.send({ op: 'revoke', grant: 'A' });
    await page.locator(`#grant-tree [data-grant="${grants.A.grantId}"][data-status="revoked"]`).waitFor({ timeout: waitMs });
    await page.locator(`#grant-tree [data-grant="${child}"][data-status="revoked_by_ancestor"]`).waitFor({ timeout: waitMs });
    await page.locator('#grant-tree').screenshot({ path: path.join(screenshots, 'grant-tree.png') });
  });

  it('charts the rejection reasons over time', async () => {
    const chart = page.locator('#reasons-chart');
    await expect(chart.getAttribute('data-reasons')).resolves.toBe('tool_not_granted,unknown_token,call_budget_exhausted');
    await expect(chart.getAttribute('data-total')).resolves.toBe('3');
    await expect(chart.locator('canvas').count()).resolves.toBeGreaterThan(0);
    await chart.screenshot({ path: path.join(screenshots, 'reasons.png') });
  });

  it('loads nothing from outside its own origin and raises no errors (no CSP violation either)', () => {
    expect(requests.filter((url) => !url.startsWith(serve.url) && !url.startsWith('blob:') && !url.startsWith('data:'))).toEqual([]);
    expect(problems).toEqual([]);
  });

  it('reports the first bad seq when a stored event body is edited', async () => {
    await writer.send({ op: 'close' });
    // seq 6 is A's first admission: make it reserve nothing, as someone hiding a call would.
    tamper(file, `UPDATE events SET body = replace(body, '"calls":1', '"calls":0') WHERE seq = 6`, { dropTriggers: true });
    await page.reload();
    await page.locator('#integrity[data-state="bad"]').waitFor({ timeout: waitMs });
    expect(await integrity(page, 'first-bad-seq')).toBe('6');
    expect(await integrity(page, 'verified-through')).toBe('5');
    await expect(page.locator('#integrity').textContent()).resolves.toMatch(/first bad seq 6.*does not hash/);
    await page.screenshot({ path: path.join(screenshots, 'tampered.png'), clip: { x: 0, y: 0, width: 1400, height: 180 } });
  });
});

describe('atc serve --checkpoint in a browser', () => {
  const file = tmp.file('checkpoint.sqlite');
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  const key = generateSignerKey(nodeCrypto, 'example.com/audit-log');
  const stranger = generateSignerKey(nodeCrypto, 'example.com/audit-log');

  beforeAll(async () => {
    const writer = startLogWriter(file);
    await writer.send({ op: 'setup' });
    await writer.send({ op: 'invoke', grant: 'A', tool: 'notes.write', args: { path: 'a' } });
    await writer.send({ op: 'close' });
    await writer.stop();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  /** A checkpoint of the log's first `size` events, signed by `signer` (made with src/transparency, as atc checkpoint would). */
  function checkpointFile(name: string, size: number, signer = key): string {
    const db = new Database(file, { readonly: true });
    const hashes = (db.prepare('SELECT hash FROM events WHERE seq <= ? ORDER BY seq').all(size) as { hash: string }[]).map((r) => r.hash);
    db.close();
    const { root } = rootOfEventHashes(merkleHasher(nodeCrypto), hashes);
    const path_ = tmp.file(name);
    writeFileSync(path_, signNote(nodeCrypto, signer, formatCheckpointBody({ origin: signer.name, size, root })));
    return path_;
  }

  async function checkpointState(checkpoint: string, signer = key): Promise<string | null> {
    const keyFile = tmp.file(`${path.basename(checkpoint)}.vkey`);
    writeFileSync(keyFile, `${formatVerifierKey(verifierKeyOf(signer))}\n`);
    const serve = await startServeProcess(file, ['--checkpoint', checkpoint, '--vkey', `@${keyFile}`]);
    const page = await browser.context.newPage();
    try {
      await page.goto(serve.url);
      await page.locator('#integrity[data-checkpoint]:not([data-checkpoint="waiting"])').waitFor({ timeout: waitMs });
      if (checkpoint.endsWith('older.note')) await page.locator('#integrity').screenshot({ path: path.join(screenshots, 'checkpoint.png') });
      return await page.locator('#integrity').getAttribute('data-checkpoint');
    } finally {
      await page.close();
      await serve.stop();
    }
  }

  it('shows a checkpoint of an earlier size as consistent: signature valid, the log extends it', async () => {
    await expect(checkpointState(checkpointFile('older.note', 5))).resolves.toBe('consistent');
  });

  it('shows a checkpoint signed by another key as bad_signature', async () => {
    await expect(checkpointState(checkpointFile('stranger.note', 5, stranger))).resolves.toBe('bad_signature');
  });

  it('shows a checkpoint of another history as inconsistent', async () => {
    const note = checkpointFile('other.note', 5);
    const forged = readFileSync(note, 'utf8');
    // Same signer, same size, another root: as if the log had been rewritten since.
    const body = formatCheckpointBody({ origin: key.name, size: 5, root: new Uint8Array(32).fill(7) });
    writeFileSync(note, signNote(nodeCrypto, key, body));
    expect(forged).not.toBe(readFileSync(note, 'utf8'));
    await expect(checkpointState(note)).resolves.toBe('inconsistent');
  });
});

import { createLedger, sqliteStore } from '../../src';
import { manualClock } from '../support/fixtures';
import { captureIo, sqliteTempDir } from '../support/sqliteFiles';
import { runAudit } from '../../src/cli/commands/audit';

const tmp = sqliteTempDir();
afterAll(() => tmp.cleanup());

// How meters and rate windows are reported (atc audit, the file journal, the audit page). That a
// snapshot carries them, on every store: test/stores/contract.test.ts.
it('atc audit shows each decision\'s cost, refused meter and retry wait; --tree shows meters and rate windows', async () => {
  const file = tmp.file('budgets-audit.sqlite');
  const clock = manualClock(Date.UTC(2025, 0, 1));
  const ledger = createLedger({ clock: clock.now, store: sqliteStore({ path: file }) });
  await ledger.registerTool<{ max: number }>({ name: 'llm', inputSchema: { type: 'object', properties: { max: { type: 'integer' } }, required: ['max'] }, cost: (a) => ({ usd_micros: a.max }), run: (_a, ctx) => ctx.report({ usd_micros: 10 }) });
  const root = await ledger.issue({ tools: ['llm'], expiresAt: clock.now() + 3_600_000, budget: { calls: 10, inputBytes: 1_000, meters: { usd_micros: 100 }, rate: { calls: 2, windowMs: 1_000 } } });
  const child = await ledger.attenuate(root.token, { budget: { meters: { usd_micros: 50 } } });
  if (child.status !== 'issued') throw new Error(child.reason);
  await ledger.invoke(child.token, 'llm', { max: 40 });
  await ledger.invoke(root.token, 'llm', { max: 200 });
  await ledger.invoke(root.token, 'llm', { max: 5 });
  clock.advance(100);
  await ledger.invoke(root.token, 'llm', { max: 5 });
  await ledger.close();

  const io = captureIo();
  expect(await runAudit([file], io)).toBe(0);
  expect(io.stdout[0]).toMatch(/^time\s+seq\s+grant\s+tool\s+decision\s+reason\s+outcome\s+bytes$/);
  expect(io.stdout.slice(1).map((l) => l.split(/\s{2,}/).slice(3))).toEqual([
    ['llm', 'admitted', '-', 'completed', '10', 'cost usd_micros=40'],
    ['llm', 'rejected', 'meter_budget_exhausted', '-', '11', 'cost usd_micros=200', 'meter usd_micros'],
    ['llm', 'admitted', '-', 'completed', '9', 'cost usd_micros=5'],
    ['llm', 'rejected', 'rate_limited', '-', '9', 'cost usd_micros=5', 'retry after 900 ms'],
  ]);
  const json = captureIo();
  expect(await runAudit([file, '--json', '--rejected'], json)).toBe(0);
  expect(json.stdout.map((l) => JSON.parse(l) as object)).toEqual([
    expect.objectContaining({ reason: 'meter_budget_exhausted', meter: 'usd_micros', meters: { usd_micros: 200 } }),
    expect.objectContaining({ reason: 'rate_limited', retryAfterMs: 900, meters: { usd_micros: 5 } }),
  ]);
  // charged: 10 (the child's call) + 5 (the root's, whose report of 10 overran its reservation of 5)
  const tree = captureIo();
  expect(await runAudit([file, '--tree', '--at', String(clock.now())], tree)).toBe(0);
  expect(tree.stdout).toEqual([
    `${root.grantId}  active  calls 2/10  bytes 19/1000  usd_micros 15/100  rate 2/2 per 1000 ms  tools llm`,
    `└─ ${child.grantId}  active  calls 1/10  bytes 10/1000  usd_micros 10/50  tools llm`,
  ]);
});

it("a file journal keeps a settlement's meter report, and drops an entry whose report is malformed", async () => {
  const { fileJournal } = await import('../../src/stores/fileJournal');
  const dir = tmp.file('journal-dir');
  const journal = fileJournal(dir);
  journal.keep('0123456789abcdef', [
    { callId: 'c1', outcome: 'completed', refund: false, report: { usd_micros: 250 } },
    { callId: 'c2', outcome: 'failed', refund: true },
  ]);
  expect(journal.kept()).toEqual([{ owner: '0123456789abcdef', pending: [{ callId: 'c1', outcome: 'completed', refund: false, report: { usd_micros: 250 } }, { callId: 'c2', outcome: 'failed', refund: true }] }]);
  const fs = await import('node:fs');
  fs.writeFileSync(`${dir}/fedcba9876543210.json`, JSON.stringify([{ callId: 'c3', outcome: 'completed', refund: false, report: { usd_micros: -1 } }]));
  expect(journal.kept().find((k) => k.owner === 'fedcba9876543210')?.pending).toEqual([]);
});

it("the audit page's model shows a meter gauge: used (in-flight reservations included) and what running calls hold", async () => {
  const { AuditModel } = await import('../../src/web/page/auditModel');
  const { canonicalJson } = await import('../../src');
  const clock = manualClock();
  const ledger = createLedger({ clock: clock.now });
  let release: (() => void) | undefined;
  await ledger.registerTool({ name: 'llm', inputSchema: { type: 'object' }, cost: () => ({ usd_micros: 300 }), run: (_a, ctx) => (ctx.report({ usd_micros: 100 }), new Promise((r) => (release = () => r('ok')))) });
  const { grantId, token } = await ledger.issue({ tools: ['llm'], expiresAt: clock.now() + 60_000, budget: { calls: 5, inputBytes: 1_000, meters: { usd_micros: 1_000 } } });
  const first = ledger.invoke(token, 'llm', {});
  await new Promise((r) => setImmediate(r));
  (release as () => void)();
  await first;
  void ledger.invoke(token, 'llm', {});
  await new Promise((r) => setImmediate(r));
  const model = new AuditModel();
  for (const e of ledger.events()) model.add(e.seq, JSON.parse(canonicalJson(e)) as Record<string, unknown>, canonicalJson(e));
  const gauges = model.gauges(grantId, model.inFlightByGrant().get(grantId) ?? {});
  expect(gauges.find((g) => g.key === 'meters.usd_micros')).toMatchObject({ limit: 1_000, used: 400, inFlight: 300 });
  (release as () => void)();
  await ledger.close();
});

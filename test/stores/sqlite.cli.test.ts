import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { createLedger, genesisHash, sealEvent, sqliteStore, verify, type EventPayload, type Ledger, type LedgerEvent } from '../../src';
import { runAudit } from '../../src/cli/commands/audit';
import { runExport } from '../../src/cli/commands/export';
import { verifySqliteFile } from '../../src/stores/sqlite/sqliteVerify';
import type { AuditRow } from '../../src/stores/sqlite/sqliteAudit';
import { manualClock } from '../support/fixtures';
import { captureIo, sqliteTempDir } from '../support/sqliteFiles';

const tmp = sqliteTempDir();
afterAll(() => tmp.cleanup());
const hour = 3_600_000;
const clock = manualClock(Date.UTC(2025, 0, 1));

/**
 * Seq 1-4 register two tools and issue grants A and B; 5-8: two calls on A (admitted 9 and 10 bytes,
 * completed), the second a minute later; 9: a third call on A rejected (11 bytes); 10-11: a call on B.
 */
async function auditLog(name: string): Promise<{ file: string; ledger: Ledger; a: { grantId: string; token: string }; b: { grantId: string; token: string } }> {
  const file = tmp.file(name);
  const ledger = createLedger({ clock: clock.now, store: sqliteStore({ path: file }) });
  for (const tool of ['notes.write', 'notes.read']) await ledger.registerTool({ name: tool, inputSchema: { type: 'object', properties: { p: { type: 'string' } } }, run: () => null });
  const a = await ledger.issue({ tools: ['notes.write'], expiresAt: clock.now() + hour, budget: { calls: 2, inputBytes: 1_000 } });
  const b = await ledger.issue({ tools: ['notes.read'], expiresAt: clock.now() + hour, budget: { calls: 5, inputBytes: 1_000 } });
  await ledger.invoke(a.token, 'notes.write', { p: 'x' });
  clock.advance(60_000);
  await ledger.invoke(a.token, 'notes.write', { p: 'xy' });
  await ledger.invoke(a.token, 'notes.write', { p: 'xyz' });
  await ledger.invoke(b.token, 'notes.read', {});
  return { file, ledger, a, b };
}

const rowsOf = (lines: readonly string[]): AuditRow[] => lines.map((l) => JSON.parse(l) as AuditRow);

describe('atc audit', () => {
  let log: Awaited<ReturnType<typeof auditLog>>;
  beforeAll(async () => {
    log = await auditLog('audit.sqlite');
  });
  afterAll(() => log.ledger.close());

  it('prints every decision as a table: time, seq, grant, tool, decision, reason, outcome, bytes', async () => {
    const io = captureIo();
    expect(await runAudit([log.file], io)).toBe(0);
    expect(io.stdout[0]).toMatch(/^time\s+seq\s+grant\s+tool\s+decision\s+reason\s+outcome\s+bytes$/);
    expect(io.stdout).toHaveLength(5);
    expect(io.stdout[3]?.split(/\s+/)).toEqual(['2025-01-01T00:01:00.000Z', '9', log.a.grantId, 'notes.write', 'rejected', 'call_budget_exhausted', '-', '11']);
  });

  it('--json prints one JSON object per decision', async () => {
    const io = captureIo();
    await runAudit([log.file, '--json'], io);
    expect(rowsOf(io.stdout).map((r) => [r.decision, r.bytes])).toEqual([
      ['admitted', 9],
      ['admitted', 10],
      ['rejected', 11],
      ['admitted', 2],
    ]);
  });

  it.each([
    [['--grant', 'B'], [10]],
    [['--tool', 'notes.read'], [10]],
    [['--rejected'], [9]],
    [['--since', '2025-01-01T00:00:30Z'], [7, 9, 10]],
    [['--since', String(Date.UTC(2025, 0, 1, 0, 1))], [7, 9, 10]],
    [['--grant', 'A', '--rejected'], [9]],
  ])('filters with %j', async (filter, seqs) => {
    const args = filter.map((a) => (a === 'A' ? log.a.grantId : a === 'B' ? log.b.grantId : a));
    const io = captureIo();
    await runAudit([log.file, '--json', ...args], io);
    expect(rowsOf(io.stdout).map((r) => r.seq)).toEqual(seqs);
  });

  it('refuses unknown options and bad values with exit code 2', async () => {
    for (const args of [[log.file, '--nope'], [log.file, '--since', 'yesterday'], [log.file, '--follow-max', '0'], []]) {
      const io = captureIo();
      expect(await runAudit(args, io)).toBe(2);
      expect(io.stderr[0]).toMatch(/^atc audit: (unknown option --nope|--since|--follow-max|missing <log>)/);
      expect(io.stderr.at(-1)).toBe("run 'atc audit --help' for its options");
    }
  });

  it('--follow streams decisions appended after it started, one poll at a time', async () => {
    const { file, ledger, b } = await auditLog('follow.sqlite');
    const polls: ((more: boolean) => void)[] = [];
    let polled: () => void = () => undefined;
    const nextPoll = () => new Promise<void>((resolve) => (polled = resolve));
    const poll = () => new Promise<boolean>((resolve) => (polls.push(resolve), polled()));
    const io = captureIo();
    let waiting = nextPoll();
    const run = runAudit([file, '--json', '--follow'], io, poll);
    await waiting;
    expect(io.stdout).toHaveLength(4);
    await ledger.invoke(b.token, 'notes.read', {});
    await ledger.invoke(b.token, 'notes.read', {});
    waiting = nextPoll();
    polls.shift()?.(true);
    await waiting;
    expect(rowsOf(io.stdout.slice(4)).map((r) => [r.seq, r.decision])).toEqual([
      [12, 'admitted'],
      [14, 'admitted'],
    ]);
    polls.shift()?.(false);
    expect(await run).toBe(0);
    await ledger.close();
  });

  it('--follow-max N ends the built CLI after N new decisions from another writer', async () => {
    const { file, ledger, b } = await auditLog('follow-cli.sqlite');
    const cli = spawn(process.execPath, [path.join(__dirname, '..', '..', 'dist', 'src', 'cli', 'main.js'), 'audit', file, '--json', '--follow', '--follow-max', '2', '--interval', '20'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const lines: string[] = [];
    const exited = new Promise<number | null>((resolve) => cli.on('exit', resolve));
    const firstPassDone = new Promise<void>((resolve) => readline.createInterface({ input: cli.stdout }).on('line', (line) => lines.push(line) === 4 && resolve()));
    await firstPassDone;
    await ledger.invoke(b.token, 'notes.read', {});
    await ledger.invoke(b.token, 'notes.read', {});
    expect(await exited).toBe(0);
    expect(rowsOf(lines.slice(4)).map((r) => r.seq)).toEqual([12, 14]);
    await ledger.close();
  });
});

describe('atc export', () => {
  it('writes the log as JSON Lines that verify() accepts', async () => {
    const { file, ledger } = await auditLog('export.sqlite');
    const events = ledger.events();
    await ledger.close();
    const output = tmp.file('export.jsonl');
    const io = captureIo();
    expect(await runExport([file, '--output', output], io)).toBe(0);
    const lines = readFileSync(output, 'utf8').trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l) as LedgerEvent)).toEqual(events);
    expect(verify(lines.map((l) => JSON.parse(l) as unknown)).ok).toBe(true);
    expect(io.stderr).toEqual([`exported ${events.length} events (head seq ${events.length}) to ${output}`]);
  });

  it('exits 2 for a missing file', async () => {
    const io = captureIo();
    expect(await runExport([tmp.file('missing.sqlite'), '--output', tmp.file('x.jsonl')], io)).toBe(2);
  });
});

describe('atc verify on a big log', () => {
  const file = tmp.file('big.sqlite');
  beforeAll(() => {
    // 20,002 valid events appended straight through the store (a ledger would take longer to make them).
    const store = sqliteStore({ path: file, snapshotEvery: 0 });
    let head = { seq: 0, hash: genesisHash };
    const batch: LedgerEvent[] = [];
    const push = (payload: EventPayload): void => {
      const event = sealEvent(payload, 1_000, head);
      head = { seq: event.seq, hash: event.hash };
      batch.push(event);
    };
    push({ type: 'tool.registered', tool: 't', inputSchema: { type: 'object' } });
    push({ type: 'grant.issued', grantId: 'g_1', tokenDigest: 'a'.repeat(64), scope: { tools: ['t'], args: {}, resources: [], notBefore: 0, expiresAt: 1e13, budget: { calls: 1e6, inputBytes: 1e9 } } });
    for (let c = 1; c <= 10_000; c++) {
      push({ type: 'call.admitted', callId: `c_${c}`, grantId: 'g_1', tool: 't', reserved: { calls: 1, inputBytes: 2 } });
      push({ type: 'call.completed', callId: `c_${c}`, grantId: 'g_1', tool: 't' });
    }
    store.append(batch);
    store.close();
  });

  it('prints a few progress lines when stderr is not a terminal', async () => {
    const io = captureIo();
    expect(await verifySqliteFile(file, io)).toBe(0);
    expect(io.stderr).toEqual([
      '  verified 5001 of 20002 events (25%)',
      '  verified 10001 of 20002 events (50%)',
      '  verified 15002 of 20002 events (75%)',
    ]);
  });

  it('redraws a progress bar on a terminal, ending at 100%', async () => {
    const frames: string[] = [];
    const io = { ...captureIo(), tty: { write: (text: string) => void frames.push(text), columns: 80 } };
    expect(await verifySqliteFile(file, io)).toBe(0);
    expect(frames.length).toBeGreaterThan(90);
    expect(frames.at(-2)).toMatch(/^\rverifying \[#+\] 100% 20002\/20002$/);
    expect(frames.at(-1)).toBe('\n');
  });
});

import { writeFileSync } from 'node:fs';
import { canonicalJson, createLedger, genesisHash, type LedgerEvent } from '../../src';
import { runVerify } from '../../src/cli/commands/verify';
import { manualClock } from '../support/fixtures';
import { captureIo, sqliteTempDir } from '../support/sqliteFiles';

const tmp = sqliteTempDir();
afterAll(() => tmp.cleanup());

/** A small log: one tool, one grant with a two-call budget, three calls (the third rejected). */
async function sampleEvents(): Promise<readonly LedgerEvent[]> {
  const clock = manualClock(Date.UTC(2025, 0, 1));
  const ledger = createLedger({ clock: clock.now });
  await ledger.registerTool({ name: 'notes.write', inputSchema: { type: 'object', properties: { p: { type: 'string' } } }, run: () => null });
  const { token } = await ledger.issue({ tools: ['notes.write'], expiresAt: clock.now() + 3_600_000, budget: { calls: 2, inputBytes: 1_000 } });
  for (const p of ['a', 'b', 'c']) await ledger.invoke(token, 'notes.write', { p });
  const events = ledger.events();
  await ledger.close();
  return events;
}

// Lines as `atc export` writes them: canonical JSON (verify refuses other forms since issue 10, defect 7).
const writeLog = (name: string, events: readonly unknown[], trailer = '\n'): string => {
  const file = tmp.file(name);
  writeFileSync(file, events.map((e) => canonicalJson(e)).join('\n') + trailer);
  return file;
};

describe('atc verify log.jsonl', () => {
  it('verifies an exported log and prints the head it ends in', async () => {
    const events = await sampleEvents();
    const io = captureIo();
    expect(await runVerify([writeLog('good.jsonl', events)], io)).toBe(0);
    const last = events.at(-1) as LedgerEvent;
    expect(io.stdout.at(-1)).toBe(`verified: head seq ${last.seq} hash ${last.hash}`);
    expect(io.stdout[0]).toMatch(new RegExp(`: ${events.length} events$`));
  });

  it('finds the head past blank and CRLF line endings', async () => {
    const events = await sampleEvents();
    const file = tmp.file('crlf.ndjson');
    writeFileSync(file, events.map((e) => canonicalJson(e)).join('\r\n') + '\r\n\r\n');
    const io = captureIo();
    expect(await runVerify([file], io)).toBe(0);
    expect(io.stdout.at(-1)).toBe(`verified: head seq ${(events.at(-1) as LedgerEvent).seq} hash ${(events.at(-1) as LedgerEvent).hash}`);
  });

  it('verifies an empty log at the genesis hash', async () => {
    const io = captureIo();
    expect(await runVerify([writeLog('empty.jsonl', [], '')], io)).toBe(0);
    expect(io.stdout.at(-1)).toBe(`verified: head seq 0 hash ${genesisHash}`);
  });

  it('exits 1 and names the seq of an edited event', async () => {
    const events = (await sampleEvents()).map((e) => ({ ...e }));
    const rejected = events.findIndex((e) => e.type === 'call.rejected');
    events[rejected] = { ...(events[rejected] as LedgerEvent), reason: 'revoked' } as LedgerEvent;
    const io = captureIo();
    expect(await runVerify([writeLog('edited.jsonl', events)], io)).toBe(1);
    // The edit breaks the hash, and re-deciding the call yields a different reason.
    expect(io.stderr.at(-1)).toBe(`NOT VERIFIED: 2 problem(s), first at seq ${rejected + 1}`);
    expect(io.stderr).toContain(`  seq ${rejected + 1} hash: hash does not match the event content`);
    expect(io.stderr).toContain(`  seq ${rejected + 1} decision: re-deciding yields call.rejected (call_budget_exhausted), the log has call.rejected (revoked)`);
  });

  it('exits 2 when the file cannot be read', async () => {
    const io = captureIo();
    expect(await runVerify([tmp.file('missing.jsonl')], io)).toBe(2);
    expect(io.stderr[0]).toMatch(/cannot read .*missing\.jsonl: ENOENT/);
  });
});

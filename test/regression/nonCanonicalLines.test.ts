import { writeFileSync } from 'node:fs';
import { createLedger, sqliteStore, type LedgerEvent } from '../../src';
import { runVerify } from '../../src/cli/commands/verify';
import { nonCanonicalLines } from '../../src/verification/jsonLines';
import { captureIo, sqliteTempDir, tamper } from '../support/sqliteFiles';

// Regression (issue 10, defect 7): an exported JSON Lines log whose lines were edited into a
// non-canonical form (reordered keys, whitespace, a duplicated key whose first value is forged)
// still verified, because only the parsed values were checked. `atc export` promises one canonical
// event per line: `atc verify` now checks each line (and each SQLite body) is exactly that.

const tmp = sqliteTempDir();
afterAll(() => tmp.cleanup());

async function exportedLines(): Promise<string[]> {
  const ledger = createLedger({ clock: () => 1_700_000_000_000 });
  await ledger.registerTool({ name: 'work', inputSchema: { type: 'object' }, run: () => 1 });
  const { token } = await ledger.issue({ tools: ['work'], expiresAt: 1_700_000_060_000, budget: { calls: 5, inputBytes: 100 } });
  await ledger.invoke(token, 'work', {});
  const { canonicalJson } = await import('../../src');
  return ledger.events().map((e: LedgerEvent) => canonicalJson(e));
}

const edits: [string, (line: string) => string][] = [
  ['reordered keys', (line) => JSON.stringify(Object.fromEntries(Object.entries(JSON.parse(line) as object).reverse()))],
  ['added whitespace', (line) => line.replace(/,/g, ', ')],
  ['a duplicated key whose first value is forged', (line) => line.replace('{"at":', '{"tool":"forged","at":')],
];

describe('regression: non-canonical lines', () => {
  it.each(edits)('atc verify log.jsonl refuses a line with %s, naming its seq', async (label, edit) => {
    const lines = await exportedLines();
    lines[2] = edit(lines[2] as string);
    const file = tmp.file(`${label.replace(/\W+/g, '-')}.jsonl`);
    writeFileSync(file, lines.join('\n') + '\n');
    const io = captureIo();
    expect(await runVerify([file], io)).toBe(1);
    expect(io.stderr.join('\n')).toMatch(/seq 3 not_canonical/);
  });

  it('accepts the canonical export itself (and CRLF line ends)', async () => {
    const lines = await exportedLines();
    expect(nonCanonicalLines(Buffer.from(lines.join('\r\n') + '\r\n'))).toEqual([]);
    const file = tmp.file('clean.jsonl');
    writeFileSync(file, lines.join('\n') + '\n');
    expect(await runVerify([file], captureIo())).toBe(0);
  });

  it('atc verify log.sqlite refuses a stored body that is not canonical, naming its seq', async () => {
    const file = tmp.file('body.sqlite');
    const ledger = createLedger({ store: sqliteStore({ path: file }), clock: () => 1_700_000_000_000 });
    await ledger.registerTool({ name: 'work', inputSchema: { type: 'object' }, run: () => 1 });
    await ledger.issue({ tools: ['work'], expiresAt: 1_700_000_060_000, budget: { calls: 5, inputBytes: 100 } });
    await ledger.close();
    tamper(file, `UPDATE events SET body = replace(body, ',', ', ') WHERE seq = 2`, { dropTriggers: true });
    const io = captureIo();
    expect(await runVerify([file], io)).toBe(1);
    expect(io.stderr.join('\n')).toMatch(/seq 2 not_canonical/);
  });
});

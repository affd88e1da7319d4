import { writeFileSync } from 'node:fs';
import { createLedger, sqliteStore, verify, verifyParallel, type LedgerEvent } from '../../src';
import { runVerify } from '../../src/cli/commands/verify';
import { captureIo, sqliteTempDir, tamper } from '../support/sqliteFiles';

// Regression (issue 10, defect 4): `1e400` (Infinity once parsed) in `at`/`seq`/`inputBytes`, a
// 20,000-deep schema, or an input that is not iterable made `verify`/`verifyParallel` throw. Every
// untrusted input now yields `{ ok: false, problems }` with a seq.

async function smallLog(): Promise<string[]> {
  const ledger = createLedger({ clock: () => 1_700_000_000_000 });
  await ledger.registerTool({ name: 'work', inputSchema: { type: 'object' }, run: () => 1 });
  const { token } = await ledger.issue({ tools: ['work'], expiresAt: 1_700_000_060_000, budget: { calls: 5, inputBytes: 100 } });
  await ledger.invoke(token, 'work', {});
  return ledger.events().map((e: LedgerEvent) => JSON.stringify(e));
}

const deep = (n: number): string => '{"a":'.repeat(n) + '1' + '}'.repeat(n);

const edits: [string, (lines: string[]) => string[], number][] = [
  ['1e400 as at', (l) => l.map((t, i) => (i === 1 ? t.replace(/"at":\d+/, '"at":1e400') : t)), 2],
  ['1e400 as seq', (l) => l.map((t, i) => (i === 2 ? t.replace(/"seq":\d+/, '"seq":1e400') : t)), 3],
  ['1e400 as inputBytes', (l) => l.map((t, i) => (i === 2 ? t.replace(/"inputBytes":\d+/, '"inputBytes":1e400') : t)), 3],
  ['1e400 as a budget', (l) => l.map((t, i) => (i === 1 ? t.replace(/"calls":5/, '"calls":1e400') : t)), 2],
  ['a 20,000-deep schema', (l) => l.map((t, i) => (i === 0 ? t.replace('{"type":"object"}', `{"type":"object","x":${deep(20_000)}}`) : t)), 1],
];

describe('regression: verify throws on hostile logs', () => {
  it.each(edits)('reports %s as a problem with its seq (verify)', async (_label, edit, seq) => {
    const lines = edit(await smallLog());
    const result = verify(lines.map((t) => JSON.parse(t) as unknown));
    expect(result.ok).toBe(false);
    expect(result.problems[0]).toMatchObject({ seq });
  });

  it.each(edits)('reports %s as a problem with its seq (verifyParallel)', async (_label, edit, seq) => {
    const result = await verifyParallel(edit(await smallLog()).join('\n'));
    expect(result.ok).toBe(false);
    expect(result.problems[0]).toMatchObject({ seq });
  });

  it.each([
    ['undefined', undefined],
    ['null', null],
    ['a number', 42],
    ['a plain object', {}],
  ])('returns a problem for %s instead of an iterable log', async (_label, input) => {
    expect(verify(input as never)).toMatchObject({ ok: false, checked: 0, problems: [{ seq: 0, code: 'malformed' }] });
    await expect(verifyParallel(input as never)).resolves.toMatchObject({ ok: false, checked: 0, problems: [{ seq: 0, code: 'malformed' }] });
  });

  it('returns a problem when the iterable throws part way', () => {
    const events = (async () => smallLog())();
    return events.then((lines) => {
      const parsed = lines.map((t) => JSON.parse(t) as unknown);
      function* broken(): Generator<unknown> {
        yield parsed[0];
        throw new Error('read failed');
      }
      expect(verify(broken())).toMatchObject({ ok: false, checked: 1, problems: [{ seq: 2, code: 'malformed' }] });
    });
  });

  it('atc verify log.jsonl names the seq of an Infinity `at`', async () => {
    const tmp = sqliteTempDir();
    try {
      const file = tmp.file('hostile.jsonl');
      writeFileSync(file, (edits[0] as (typeof edits)[0])[1](await smallLog()).join('\n') + '\n');
      const io = captureIo();
      expect(await runVerify([file], io)).toBe(1);
      expect(io.stderr.join('\n')).toMatch(/seq 2 malformed/);
    } finally {
      tmp.cleanup();
    }
  });

  it('atc verify log.sqlite names the seq of a stored body whose `at` is 1e400', async () => {
    const tmp = sqliteTempDir();
    try {
      const file = tmp.file('hostile.sqlite');
      const ledger = createLedger({ store: sqliteStore({ path: file }), clock: () => 1_700_000_000_000 });
      await ledger.registerTool({ name: 'work', inputSchema: { type: 'object' }, run: () => 1 });
      await ledger.issue({ tools: ['work'], expiresAt: 1_700_000_060_000, budget: { calls: 5, inputBytes: 100 } });
      await ledger.close();
      tamper(file, `UPDATE events SET body = replace(body, '"at":1700000000000', '"at":1e400') WHERE seq = 2`, { dropTriggers: true });
      const io = captureIo();
      expect(await runVerify([file], io)).toBe(1);
      expect(io.stderr.join('\n')).toMatch(/seq 2 malformed/);
    } finally {
      tmp.cleanup();
    }
  });
});

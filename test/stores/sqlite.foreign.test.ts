import Database from 'better-sqlite3';
import { canonicalJson, createLedger, LedgerError, sealEvent, sqliteStore, type Ledger, type LedgerEvent } from '../../src';
import { rowOf } from '../../src/stores/shared/eventRows';
import { sqliteTempDir } from '../support/sqliteFiles';

// Another writer sharing the file appends events between two of this ledger's admissions. The ledger
// folds them only after checking that they chain onto its head (seq, prevHash, recomputed hash);
// one that does not makes the next admission fail closed.

const tmp = sqliteTempDir();
afterAll(() => tmp.cleanup());
const hour = 3_600_000;

interface Opened {
  readonly file: string;
  readonly token: string;
  readonly ledger: Ledger;
  runs(): number;
}

/** A ledger on a fresh file with a counting `noop` tool and one grant; one call already completed. */
async function openedAfterOneCall(name: string): Promise<Opened> {
  const file = tmp.file(name);
  const ledger = createLedger({ store: sqliteStore({ path: file }) });
  let runs = 0;
  await ledger.registerTool({ name: 'noop', inputSchema: { type: 'object', properties: {} }, run: () => void runs++ });
  const { token } = await ledger.issue({ tools: ['noop'], expiresAt: Date.now() + hour, budget: { calls: 9, inputBytes: 100 } });
  expect(await ledger.invoke(token, 'noop', {})).toMatchObject({ status: 'completed' });
  return { file, token, ledger, runs: () => runs };
}

type Breakage = 'hash' | 'prevHash' | 'seq';

/**
 * Writes, as a foreign writer with file access would, one event after the stored head that is broken
 * in one way. Returns the seq the ledger must name.
 */
function appendForeign(file: string, breakage: Breakage): number {
  const db = new Database(file);
  try {
    const head = db.prepare('SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1').get() as { seq: number; hash: string };
    const payload = { type: 'tool.registered', tool: 'foreign', inputSchema: { type: 'object' } } as const;
    let event: LedgerEvent;
    if (breakage === 'prevHash') event = sealEvent(payload, Date.now(), { seq: head.seq, hash: 'f'.repeat(64) });
    else if (breakage === 'seq') event = sealEvent(payload, Date.now(), { seq: head.seq + 1, hash: head.hash }); // skips a seq
    else event = { ...sealEvent(payload, Date.now(), head), tool: 'edited-after-sealing' } as LedgerEvent;
    const row = { ...rowOf(event), body: canonicalJson(event) };
    db.prepare(
      'INSERT INTO events (seq, type, at, grant_id, tool, call_id, reason, input_bytes, hash, prev_hash, body) VALUES (@seq, @type, @at, @grant_id, @tool, @call_id, @reason, @input_bytes, @hash, @prev_hash, @body)',
    ).run(row);
    return event.seq;
  } finally {
    db.close();
  }
}

function storedCount(file: string): number {
  const db = new Database(file, { readonly: true });
  const n = db.prepare('SELECT count(*) FROM events').pluck().get() as number;
  db.close();
  return n;
}

/** The error a host command rejects with: ledger_unavailable, caused by the chain check. */
async function hostFailure(ledger: Ledger): Promise<{ code: string; cause: unknown }> {
  try {
    await ledger.issue({ tools: ['noop'], expiresAt: Date.now() + hour, budget: { calls: 1, inputBytes: 1 } });
  } catch (error) {
    return { code: (error as LedgerError).code, cause: (error as LedgerError).cause };
  }
  throw new Error('the host command was accepted');
}

describe.each<Breakage>(['hash', 'prevHash', 'seq'])('a foreign event with a broken %s, written between two admissions', (breakage) => {
  it('makes the next admission fail closed: ledger_unavailable, no tool runs, nothing appended', async () => {
    const { file, token, ledger, runs } = await openedAfterOneCall(`broken-${breakage}.sqlite`);
    appendForeign(file, breakage);
    const stored = storedCount(file);
    expect(await ledger.invoke(token, 'noop', {})).toMatchObject({ status: 'rejected', reason: 'ledger_unavailable' });
    expect(runs()).toBe(1);
    expect(storedCount(file)).toBe(stored);
    await ledger.close();
  });

  it('is named by seq in the error a host command rejects with', async () => {
    const { file, ledger } = await openedAfterOneCall(`named-${breakage}.sqlite`);
    const badSeq = appendForeign(file, breakage);
    const failure = await hostFailure(ledger);
    expect(failure.code).toBe('ledger_unavailable');
    expect(failure.cause).toBeInstanceOf(LedgerError);
    expect(failure.cause).toMatchObject({ code: 'invalid_log', message: `the shared log does not chain at seq ${badSeq}` });
    await ledger.close();
  });
});

describe('foreign events inside the admission transaction', () => {
  it('well-chained foreign events are folded before deciding: a budget another process used up stays used', async () => {
    const { file, token, ledger, runs } = await openedAfterOneCall('good-foreign.sqlite');
    const other = createLedger({ store: sqliteStore({ path: file }) });
    await other.registerTool({ name: 'noop', inputSchema: { type: 'object', properties: {} }, run: () => null });
    for (let i = 0; i < 8; i++) expect(await other.invoke(token, 'noop', {})).toMatchObject({ status: 'completed' });
    await other.close();
    expect(await ledger.invoke(token, 'noop', {})).toMatchObject({ status: 'rejected', reason: 'call_budget_exhausted' });
    expect(runs()).toBe(1);
    await ledger.close();
  });
});

import Database from 'better-sqlite3';
import { sqliteStore, verify, type LedgerEvent } from '../../../src';
import { oursLedger } from '../ours';
import { policy, request } from '../policy';
import { figures, now, round, type Figures } from '../stats';
import { scratchDir } from '../tmpFiles';
import type { BenchContext, ScenarioResult } from './types';

interface Row {
  seq: number;
  type: string;
  at: number;
  grant_id: string | null;
  tool: string | null;
  call_id: string | null;
  reason: string | null;
  input_bytes: number | null;
  hash: string;
  prev_hash: string;
  body: string;
}

/** `callers` async callers, each invoking one call after another until `total` calls are done. */
async function run(ledger: Awaited<ReturnType<typeof oursLedger>>['ledger'], token: string, callers: number, total: number): Promise<Figures & { completedIds: string[] }> {
  const lat = new Float64Array(total);
  const completedIds: string[] = [];
  let next = 0;
  const t0 = now();
  await Promise.all(
    Array.from({ length: callers }, async () => {
      for (let i = next++; i < total; i = next++) {
        const t = now();
        const o = await ledger.invoke(token, policy.tool, request(i));
        lat[i] = now() - t;
        if (o.status !== 'completed') throw new Error(`durable call ${i}: ${o.status}`);
        completedIds.push(o.callId);
      }
    }),
  );
  return { ...figures(lat, now() - t0), completedIds };
}

/**
 * Scenario 4: durable admission on SQLite (WAL, synchronous=FULL), 64 concurrent callers and one,
 * against raw inserts of the same rows into the same schema in transactions of 64 rows (the group
 * the 64 callers form) with the same pragmas.
 */
export async function durable(ctx: BenchContext): Promise<ScenarioResult> {
  const scratch = scratchDir('durable');
  try {
    const concurrentCalls = ctx.quick ? 3_000 : 20_000;
    const sequentialCalls = ctx.quick ? 200 : 1_000;
    const store = sqliteStore({ path: scratch.file('ledger.db') });
    const setup = await oursLedger({ store });
    const token = setup.tokens[0] as string;
    await run(setup.ledger, token, 64, 640); // warm-up
    const concurrent = await run(setup.ledger, token, 64, concurrentCalls);
    const sequential = await run(setup.ledger, token, 1, sequentialCalls);
    await setup.ledger.close();

    // Acknowledgement rule: every call acknowledged as completed is in the file, and the file verifies.
    const db = new Database(scratch.file('ledger.db'), { readonly: true });
    const rows = db.prepare('SELECT * FROM events ORDER BY seq').all() as Row[];
    db.close();
    const stored = new Set(rows.filter((r) => r.type === 'call.completed').map((r) => r.call_id));
    const acknowledgedAndStored = [...concurrent.completedIds, ...sequential.completedIds].every((id) => stored.has(id));
    const verified = verify(rows.map((r) => JSON.parse(r.body) as LedgerEvent)).ok;

    // Raw: the same rows, same schema (created by the store), same pragmas, 64 rows per transaction.
    const rawStore = sqliteStore({ path: scratch.file('raw.db') });
    rawStore.close();
    const raw = new Database(scratch.file('raw.db'));
    raw.pragma('journal_mode = WAL');
    raw.pragma('synchronous = FULL');
    const insert = raw.prepare('INSERT INTO events (seq, type, at, grant_id, tool, call_id, reason, input_bytes, hash, prev_hash, body) VALUES (@seq, @type, @at, @grant_id, @tool, @call_id, @reason, @input_bytes, @hash, @prev_hash, @body)');
    const insertMany = raw.transaction((batch: Row[]) => {
      for (const r of batch) insert.run(r);
    });
    const rowsToInsert = rows.slice(0, 2 * concurrentCalls);
    const batchRows = 64;
    const rawLat = new Float64Array(Math.ceil(rowsToInsert.length / batchRows));
    const r0 = now();
    for (let b = 0; b * batchRows < rowsToInsert.length; b++) {
      const t = now();
      insertMany(rowsToInsert.slice(b * batchRows, (b + 1) * batchRows));
      rawLat[b] = now() - t;
    }
    const rawNs = now() - r0;
    raw.close();
    const rawCallsPerSec = round(rowsToInsert.length / 2 / (rawNs / 1e9));
    const rawFigures = figures(rawLat, rawNs);
    const ratio = round(concurrent.opsPerSec / rawCallsPerSec, 3);
    const { completedIds: _c, ...concurrentFigures } = concurrent;
    const { completedIds: _s, ...sequentialFigures } = sequential;
    return {
      id: '4',
      title: 'Durable admission on SQLite (WAL, synchronous=FULL)',
      figures: {
        'ours, 64 concurrent callers': concurrentFigures,
        'ours, 1 caller': sequentialFigures,
        'raw inserts, 64 rows per transaction (per transaction)': rawFigures,
      },
      derived: {
        'raw inserts, calls/s equivalent (2 rows per call)': rawCallsPerSec,
        'ratio ours(64 callers)/raw': ratio,
        acknowledgedCallsAllStored: acknowledgedAndStored,
        fileVerifies: verified,
      },
      target: { description: "64 callers' rate ≥ 30% of raw batched inserts of the same rows; acknowledgement rule intact", value: ratio, limit: 0.3, pass: ratio >= 0.3 && acknowledgedAndStored && verified },
      notes: ['A call writes two rows (call.admitted before the tool runs, call.completed after), each in a group-committed transaction.'],
    };
  } finally {
    scratch.cleanup();
  }
}

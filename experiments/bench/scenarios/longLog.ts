import Database from 'better-sqlite3';
import { createLedger, sqliteStore, verify, verifyParallel } from '../../../src';
import { jsonLines } from '../../../src/verification/jsonLines';
import { oursLedger } from '../ours';
import { policy, request } from '../policy';
import { now, round } from '../stats';
import { scratchDir } from '../tmpFiles';
import type { BenchContext, ScenarioResult } from './types';

/** Fills a SQLite ledger with about `events` events: bursts of 4,096 calls, each call two events. */
async function fill(file: string, events: number, ctx: BenchContext): Promise<void> {
  const setup = await oursLedger({ store: sqliteStore({ path: file }), pendingCommandsMax: 10_000 });
  const token = setup.tokens[0] as string;
  const calls = Math.ceil((events - 2) / 2);
  const t0 = Date.now();
  for (let done = 0; done < calls; ) {
    const chunk = Math.min(4_096, calls - done);
    const outcomes = await Promise.all(Array.from({ length: chunk }, (_, k) => setup.ledger.invoke(token, policy.tool, request(done + k))));
    if (outcomes.some((o) => o.status !== 'completed')) throw new Error('fill: a call did not complete');
    done += chunk;
  }
  await setup.ledger.close();
  ctx.log(`  filled ${events.toLocaleString('en-US')} events in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

/** The stored bodies as JSON Lines in shared memory (what `atc verify` would read from the file). */
function bodiesAsJsonLines(file: string): Uint8Array {
  const db = new Database(file, { readonly: true });
  const bodies = db.prepare('SELECT body FROM events ORDER BY seq').pluck().all() as string[];
  db.close();
  let length = 0;
  for (const b of bodies) length += Buffer.byteLength(b, 'utf8') + 1;
  const out = Buffer.from(new SharedArrayBuffer(length));
  let at = 0;
  for (const b of bodies) {
    at += out.write(b, at, 'utf8');
    out[at++] = 10;
  }
  return new Uint8Array(out.buffer, 0, length);
}

function median(values: number[]): number {
  const s = values.slice().sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

/** Scenario 6: verify a long log on two cores, and reopen a long SQLite ledger from its snapshot. */
export async function longLog(ctx: BenchContext): Promise<ScenarioResult> {
  const scratch = scratchDir('long');
  try {
    const events = ctx.quick ? 100_000 : 1_000_000;
    const file = scratch.file('long.db');
    await fill(file, events, ctx);

    // Reopen: snapshot + tail check, median of 5 opens (each a new connection and a new ledger).
    const opens: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t = now();
      const ledger = createLedger({ store: sqliteStore({ path: file }) });
      opens.push((now() - t) / 1e6);
      await ledger.close();
    }
    const reopenMs = round(median(opens), 1);

    const bytes = bodiesAsJsonLines(file);
    const stored = bytes.byteLength;
    const p0 = now();
    const parallel = await verifyParallel(bytes);
    const parallelMs = round((now() - p0) / 1e6);
    const s0 = now();
    const sequential = verify(jsonLines(bytes));
    const sequentialMs = round((now() - s0) / 1e6);
    const same = JSON.stringify(parallel) === JSON.stringify(sequential);
    const verifyLimitMs = 5_000 * (events / 1_000_000);
    const pass = parallel.ok && same && parallelMs <= verifyLimitMs && reopenMs <= 300;
    return {
      id: '6',
      title: `Long log: verify ${events.toLocaleString('en-US')} events, reopen a ${events.toLocaleString('en-US')}-event SQLite ledger`,
      figures: {},
      derived: {
        events: parallel.checked,
        jsonLinesMiB: round(stored / 2 ** 20, 1),
        verifyParallelMs: parallelMs,
        verifySequentialMs: sequentialMs,
        verifyParallelUsPerEvent: round((parallelMs * 1e3) / events, 2),
        sameResultAsVerify: same,
        reopenWithSnapshotMsMedian: reopenMs,
        reopenRunsMs: opens.map((o) => round(o, 1)).join(' / '),
      },
      target: {
        description: `verifyParallel ≤ ${verifyLimitMs} ms (5 s per 1,000,000 events) and reopen ≤ 300 ms`,
        value: parallelMs,
        limit: verifyLimitMs,
        pass,
      },
      notes: [
        'verify input: the stored bodies (canonical JSON) as JSON Lines in shared memory; parse is included.',
        `reopen: createLedger({ store: sqliteStore({ path }) }) = open the file, read the newest snapshot, check the events after it.`,
        ...(ctx.quick ? ['--quick uses 100,000 events; the verify limit scales to 0.5 s.'] : []),
      ],
    };
  } finally {
    scratch.cleanup();
  }
}

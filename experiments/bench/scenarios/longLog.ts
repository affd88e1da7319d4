import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { openSync, writeSync, closeSync } from 'node:fs';
import * as path from 'node:path';
import { createLedger, sqliteStore } from '../../../src';
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

/** Writes the stored bodies as JSON Lines (what `atc export` writes and `atc verify` reads); returns the bytes written. */
function exportJsonLines(file: string, out: string): number {
  const db = new Database(file, { readonly: true });
  const fd = openSync(out, 'w');
  let written = 0;
  try {
    let lines: string[] = [];
    const flush = (): void => {
      if (lines.length > 0) written += writeSync(fd, lines.join(''));
      lines = [];
    };
    for (const body of db.prepare('SELECT body FROM events ORDER BY seq').pluck().iterate() as IterableIterator<string>) {
      lines.push(body, '\n');
      if (lines.length >= 8_192) flush();
    }
    flush();
  } finally {
    closeSync(fd);
    db.close();
  }
  return written;
}

interface VerifyRun {
  readonly bytes: number;
  readonly checked: number;
  readonly ok: boolean;
  readonly same: boolean;
  readonly parallelMs: number;
  readonly sequentialMs: number;
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

    const jsonl = scratch.file('long.jsonl');
    exportJsonLines(file, jsonl);
    const child = path.join(__dirname, '..', 'verifyChild.js');
    const run = JSON.parse(execFileSync(process.execPath, [child, jsonl], { encoding: 'utf8', maxBuffer: 1 << 20 }).trim().split('\n').pop() as string) as VerifyRun;
    const parallelMs = round(run.parallelMs);
    const sequentialMs = round(run.sequentialMs);
    const same = run.same;
    const stored = run.bytes;
    const verifyLimitMs = 5_000;
    const pass = run.ok && same && parallelMs <= verifyLimitMs && reopenMs <= 300;
    return {
      id: '6',
      title: `Long log: verify ${events.toLocaleString('en-US')} events, reopen a ${events.toLocaleString('en-US')}-event SQLite ledger`,
      figures: {},
      derived: {
        events: run.checked,
        jsonLinesMiB: round(stored / 2 ** 20, 1),
        verifyParallelMs: parallelMs,
        verifySequentialMs: sequentialMs,
        verifyParallelUsPerEvent: round((parallelMs * 1e3) / events, 2),
        sameResultAsVerify: same,
        reopenWithSnapshotMsMedian: reopenMs,
        reopenRunsMs: opens.map((o) => round(o, 1)).join(' / '),
      },
      // The target is the issue's: 1,000,000 events. At --quick's 100,000 a fresh process spends
      // most of the time warming up (≈ 8 µs per event either way), so --quick reports, not judges.
      ...(ctx.quick
        ? { noTarget: 'the target is for 1,000,000 events; at 100,000 a fresh process spends most of the time in JIT warm-up (run the full bench)' }
        : {
            target: {
              description: `verifyParallel ≤ ${verifyLimitMs} ms (5 s per 1,000,000 events) and reopen ≤ 300 ms`,
              value: parallelMs,
              limit: verifyLimitMs,
              pass,
            },
          }),
      notes: [
        'verify input: the stored bodies (canonical JSON) exported to a JSON Lines file, read into shared memory by a fresh process (as `atc verify` runs); parse is included, reading the file is not.',
        `reopen: createLedger({ store: sqliteStore({ path }) }) = open the file, read the newest snapshot, check the events after it.`,
        ...(ctx.quick ? ['--quick uses 100,000 events and checks no target: in a fresh process the JIT warm-up dominates at that size (verifyParallel and verify both ≈ 8 µs per event, against ≈ 4.2 µs at 1,000,000).'] : []),
      ],
    };
  } finally {
    scratch.cleanup();
  }
}

import { fork } from 'node:child_process';
import * as path from 'node:path';
import { sqliteStore } from '../../../src';
import { oursLedger } from '../ours';
import { figures, round } from '../stats';
import { scratchDir } from '../tmpFiles';
import type { BenchContext, ScenarioResult } from './types';

interface ChildReport {
  lat?: number[];
  doneAt?: number[];
  failures?: number;
  error?: string;
  ready?: boolean;
}

/** Scenario 5: 4 processes share one SQLite file and one grant; each runs 8 callers for the same time. */
export async function crossProcess(ctx: BenchContext): Promise<ScenarioResult> {
  const scratch = scratchDir('xproc');
  try {
    const file = scratch.file('shared.db');
    const setup = await oursLedger({ store: sqliteStore({ path: file }) });
    const token = setup.tokens[0] as string;
    await setup.ledger.close();
    const processes = 4;
    const callers = 8;
    const ms = ctx.quick ? 3_000 : 15_000;
    const script = path.join(__dirname, '..', 'crossProcessChild.js');
    const children = Array.from({ length: processes }, (_, id) => fork(script, [file, token, String(callers), String(id)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
    const ready = children.map((c) => new Promise<void>((resolve) => c.once('message', () => resolve())));
    // Barrier: every process has opened the file and registered its tool before the window opens.
    await Promise.all(ready);
    const reports = children.map(
      (c) =>
        new Promise<ChildReport>((resolve) => {
          c.once('message', (m: ChildReport) => resolve(m));
          c.once('exit', () => resolve({ error: 'exited without a report' }));
        }),
    );
    // One common window for all: 'go' messages arrive at slightly different times, the start time does not.
    const startAt = Date.now() + 250;
    for (const c of children) c.send({ startAt, ms });
    const results = await Promise.all(reports);
    const failed = results.find((r) => r.error !== undefined);
    if (failed) throw new Error(`a process failed: ${failed.error}`);
    const perProcess = results.map((r) => (r.lat ?? []).length);
    const total = perProcess.reduce((a, b) => a + b, 0);
    const all = Float64Array.from(results.flatMap((r) => r.lat ?? []));
    const f = figures(all, ms * 1e6);
    const minShare = round(Math.min(...perProcess) / total, 3);
    const failures = results.reduce((a, r) => a + (r.failures ?? 0), 0);
    const maxStallMs = Math.max(...results.map((r) => longestStall(r.doneAt ?? [], ms)));
    return {
      id: '5',
      title: `Cross-process: ${processes} processes × ${callers} callers sharing one SQLite file`,
      figures: { 'all processes (per admission, wait included)': f },
      derived: {
        admissionsPerSec: f.opsPerSec,
        p99WaitMs: round(f.p99Us / 1e3, 2),
        maxWaitMs: round(f.maxUs / 1e3, 2),
        perProcessAdmissions: perProcess.join(' / '),
        smallestShare: minShare,
        'longest time a process completed nothing (ms)': maxStallMs,
        callsNotCompleted: failures,
      },
      target: { description: 'no process starves: each gets ≥ 10% of admissions', value: minShare, limit: 0.1, pass: minShare >= 0.1 && failures === 0 },
      notes: ['Latency of one admission is invoke → outcome (admission, no-op tool, settlement), so it includes waiting for the file lock.'],
    };
  } finally {
    scratch.cleanup();
  }
}

/** The longest stretch of the window in which one process completed no call (window edges included). */
function longestStall(doneAt: readonly number[], ms: number): number {
  const sorted = [...doneAt].sort((a, b) => a - b);
  let previous = 0;
  let longest = 0;
  for (const at of sorted) {
    longest = Math.max(longest, at - previous);
    previous = at;
  }
  return Math.max(longest, ms - previous);
}

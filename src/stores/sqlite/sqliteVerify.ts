import type Database from 'better-sqlite3';
import { canonicalJson } from '../../domain/canonicalJson';
import { sha256Hex } from '../../domain/chain';
import type { LedgerEvent } from '../../domain/events';
import { evolve } from '../../domain/evolve';
import { initialState, type LedgerState } from '../../domain/state';
import { verify } from '../../verification/verify';
import { openLogFile } from './sqliteConnection';
import { columnMismatch, eventColumns, type EventRow } from '../shared/eventRows';

/** Where verification reports: one line per call. `tty`, when given, gets a redrawn progress bar. */
export interface SqliteVerifyIo {
  out(line: string): void;
  err(line: string): void;
  readonly tty?: { write(text: string): unknown; readonly columns?: number };
}

interface Problem {
  readonly seq: number | undefined;
  readonly code: string;
  readonly message: string;
}

interface SnapshotRow {
  readonly seq: number;
  readonly head_hash: string;
  readonly state: string;
  readonly state_hash: string;
}

const problemsShownMax = 50;
/** Below this many events no progress is shown (verification takes well under a second). */
const progressEventsMin = 20_000;
const requiredTriggers = ['events_refuse_update', 'events_refuse_delete'] as const;

/**
 * `atc verify log.sqlite`: checks the whole stored log, ignoring snapshots for trust: every event's
 * shape, sequence, chain, hash and re-derived decision (the library's `verify`), that each row's
 * indexed columns agree with its canonical JSON body, that every stored snapshot equals the replay
 * of the events it covers, and that the append-only triggers are in place.
 * Exit code: 0 verified, 1 problems found, 2 the file cannot be read as a log.
 */
export async function verifySqliteFile(path: string, io: SqliteVerifyIo): Promise<number> {
  let db: Database.Database;
  try {
    db = openLogFile(path);
  } catch (error) {
    io.err(`atc verify: ${(error as Error).message}`);
    return 2;
  }
  try {
    return verifyOpenLog(db, path, io);
  } finally {
    db.close();
  }
}

/**
 * Verifies an open log. `schemaProblems`, when given, replaces the check of the file's own triggers
 * (a PostgreSQL log, mirrored into memory, has its triggers checked on the server).
 */
export function verifyOpenLog(db: Database.Database, path: string, io: SqliteVerifyIo, schemaProblems?: readonly Problem[]): number {
  const problems: Problem[] = [];
  if (schemaProblems !== undefined) problems.push(...schemaProblems);
  else {
    const triggers = new Set(db.prepare("SELECT name FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = 'events'").pluck().all() as string[]);
    for (const name of requiredTriggers) {
      if (!triggers.has(name)) problems.push({ seq: undefined, code: 'schema', message: `trigger ${name} is missing: the events table is no longer append-only` });
    }
  }
  const total = db.prepare('SELECT count(*) FROM events').pluck().get() as number;
  const snapshots = db.prepare('SELECT seq, head_hash, state, state_hash FROM snapshots ORDER BY seq').all() as SnapshotRow[];
  io.out(`atc verify ${path}: ${total} events, ${snapshots.length} snapshot(s)`);
  const progress = progressReporter(total, io);
  const snapshotChecks = new SnapshotChecker(snapshots);

  let examined = 0;
  function* events(): Generator<unknown> {
    for (const row of db.prepare(`SELECT ${eventColumns} FROM events ORDER BY seq`).iterate() as IterableIterator<EventRow>) {
      examined++;
      progress.tick(examined);
      let event: unknown;
      try {
        event = JSON.parse(row.body) as unknown;
      } catch {
        problems.push({ seq: row.seq, code: 'malformed', message: 'stored body is not JSON' });
        event = null;
      }
      if (event !== null && typeof event === 'object') {
        const column = safeColumnMismatch(row, event as LedgerEvent);
        if (column !== undefined) problems.push({ seq: row.seq, code: 'column', message: `column ${column} disagrees with the event body` });
        if (!isCanonicalText(row.body, event)) problems.push({ seq: row.seq, code: 'not_canonical', message: 'stored body is not exactly the canonical JSON of its event' });
        snapshotChecks.fold(event as LedgerEvent);
      }
      yield event;
    }
  }
  const result = verify(events(), { problemsMax: 1_000 });
  progress.done();
  for (const p of result.problems) problems.push(p);
  for (const p of snapshotChecks.finish()) problems.push(p);
  problems.sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0));

  if (problems.length === 0) {
    const head = db.prepare('SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1').get() as { seq: number; hash: string } | undefined;
    io.out(`  checked  ${result.checked} events: shape, sequence, hash chain, hashes, re-derived decisions, indexed columns`);
    io.out(`  checked  ${snapshots.length} snapshot(s) against the replay; append-only triggers present`);
    io.out(`verified: head seq ${head?.seq ?? 0} hash ${head?.hash ?? '-'}`);
    return 0;
  }
  const first = problems.find((p) => p.seq !== undefined);
  io.err(`problems (${problems.length}):`);
  for (const p of problems.slice(0, problemsShownMax)) io.err(`  ${p.seq === undefined ? '' : `seq ${p.seq} `}${p.code}: ${p.message}`);
  if (problems.length > problemsShownMax) io.err(`  … and ${problems.length - problemsShownMax} more`);
  io.err(`NOT VERIFIED: ${problems.length} problem(s)${first?.seq !== undefined ? `, first at seq ${first.seq}` : ''}`);
  return 1;
}

function safeColumnMismatch(row: EventRow, event: LedgerEvent): string | undefined {
  try {
    return columnMismatch(row, event);
  } catch {
    return 'body';
  }
}

/** Folds the log alongside `verify` and compares each stored snapshot with the state at its seq. */
class SnapshotChecker {
  private state: LedgerState = initialState;
  private foldable = true;
  private readonly problems: Problem[] = [];
  private readonly pending: SnapshotRow[];
  private readonly lastSeq: number;

  constructor(snapshots: readonly SnapshotRow[]) {
    this.pending = [...snapshots];
    this.lastSeq = snapshots.at(-1)?.seq ?? 0;
  }

  fold(event: LedgerEvent): void {
    if (!this.foldable || this.state.head.seq >= this.lastSeq) return;
    try {
      this.state = evolve(this.state, event);
    } catch {
      this.foldable = false; // verify reports the malformed event itself
      return;
    }
    while (this.pending[0] !== undefined && this.pending[0].seq <= this.state.head.seq) this.check(this.pending.shift() as SnapshotRow);
  }

  finish(): readonly Problem[] {
    for (const row of this.pending) this.problems.push({ seq: row.seq, code: 'snapshot', message: 'snapshot beyond the end of the log (or after an unreadable event)' });
    return this.problems;
  }

  private check(row: SnapshotRow): void {
    const report = (message: string): void => void this.problems.push({ seq: row.seq, code: 'snapshot', message });
    if (this.state.head.seq !== row.seq) return report('snapshot seq does not fall on an event');
    if (row.head_hash !== this.state.head.hash) return report('snapshot head hash differs from the event at its seq');
    if (sha256Hex(row.state) !== row.state_hash) return report('snapshot text does not match its state hash');
    let stored: unknown;
    try {
      stored = JSON.parse(row.state) as unknown;
    } catch {
      return report('snapshot state is not JSON');
    }
    if (canonicalJson(stored) !== canonicalJson(this.state)) report('snapshot state differs from the replay of the events it covers');
  }
}

/** A redrawn bar on a terminal; otherwise a line at each quarter. Nothing for small logs. */
function progressReporter(total: number, io: SqliteVerifyIo): { tick(n: number): void; done(): void } {
  if (total < progressEventsMin) return { tick: () => undefined, done: () => undefined };
  const tty = io.tty;
  const steps = tty !== undefined ? 100 : 4;
  let nextStep = 1;
  const draw = (n: number): void => {
    const fraction = n / total;
    if (tty !== undefined) {
      const width = Math.max(10, Math.min(50, (tty.columns ?? 80) - 40));
      const filled = Math.round(fraction * width);
      tty.write(`\rverifying [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(Math.floor(fraction * 100)).padStart(3)}% ${n}/${total}`);
    } else {
      io.err(`  verified ${n} of ${total} events (${Math.floor(fraction * 100)}%)`);
    }
  };
  return {
    tick(n) {
      if (n < (nextStep * total) / steps) return;
      while (n >= (nextStep * total) / steps) nextStep++;
      if (n < total) draw(n);
    },
    done() {
      if (tty !== undefined) {
        draw(total);
        tty.write('\n');
      }
    },
  };
}

/** Whether a stored body is exactly the canonical JSON of the event it parses to (the store writes only that). */
function isCanonicalText(body: string, event: unknown): boolean {
  try {
    return canonicalJson(event) === body;
  } catch {
    return true; // cannot be written canonically at all: verify reports it as malformed
  }
}

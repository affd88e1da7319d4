import { readFileSync } from 'node:fs';
import { verifyEvidence, type EvidenceReport } from '../../../experiments/evidence/verifyEvidence';
import { formatSummary } from '../../../experiments/evidence/summaryTable';
import { claims } from '../../../experiments/evidence/claims';
import type { CliCommand } from '../command';
import { verifySqliteFile } from '../../stores/sqlite/sqliteVerify';
import { isJsonLinesPath, verifyJsonLinesFile } from './verifyJsonLines';
import { isPostgresTarget } from '../logTarget';
import { parseOptions } from '../../stores/sqlite/sqliteCliIo';
import { verifyAgainstCheckpoint } from './verifyCheckpoint';

/** Where a command writes; tests pass their own to read what a run printed. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
}

export const processIo: CliIo = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
};

const usage = 'usage: atc verify <evidence.json | log.sqlite | log.db | log.jsonl | postgres://…[?schema=atc]> [--checkpoint <file> --vkey <key|@file>]';
const problemsShownMax = 50;

/** Prints what was checked, the table recomputed from the logs, and every problem with its seq. */
export function printEvidenceReport(path: string, report: EvidenceReport, io: CliIo): void {
  io.out(`atc verify ${path}`);
  for (const line of report.checks) io.out(`  checked  ${line}`);
  if (report.recomputed !== undefined) io.out(`\n${formatSummary(report.recomputed, claims, 'Recomputed from the logs')}\n`);
  if (report.ok) {
    io.out('verified');
    return;
  }
  io.err(`problems (${report.problems.length}):`);
  for (const p of report.problems.slice(0, problemsShownMax)) io.err(`  ${p.where}${p.seq === undefined ? '' : ` seq ${p.seq}`}: ${p.message}`);
  if (report.problems.length > problemsShownMax) io.err(`  … and ${report.problems.length - problemsShownMax} more`);
  io.err(`NOT VERIFIED: ${report.problems.length} problem(s)`);
}

/** Verifies an evidence file written by `atc reproduce`: exit 0 verified, 1 a problem (tampering), 2 unreadable. */
export function verifyEvidenceFile(path: string, io: CliIo): number {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    io.err(`atc verify: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
    return 2;
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text) as unknown;
  } catch {
    io.err(`atc verify: ${path} is not JSON`);
    io.err('NOT VERIFIED: 1 problem(s)');
    return 1;
  }
  const report = verifyEvidence(doc);
  printEvidenceReport(path, report, io);
  return report.ok ? 0 : 1;
}

// ---- SQLite logs ------------------------------------------------------------------------------
// A `.sqlite`/`.db` path is a durable event log, not an evidence file: the SQLite store verifies it
// (src/stores/sqlite/sqliteVerify.ts).
function verifySqlitePath(path: string, io: CliIo): number | Promise<number> {
  // A progress bar is redrawn only on the real terminal; other outputs get a few progress lines.
  return verifySqliteFile(path, io === processIo && process.stderr.isTTY ? { ...io, tty: process.stderr } : io);
}
// ---- end SQLite logs --------------------------------------------------------------------------

export function isSqlitePath(path: string): boolean {
  return /\.(sqlite|db)$/i.test(path);
}

/** `atc verify <file> [--checkpoint <file> --vkey <key|@file>]`; resolves to the exit code. */
export async function runVerify(args: readonly string[], io: CliIo = processIo): Promise<number> {
  const parsed = parseOptions(args, ['checkpoint', 'vkey'], ['help']);
  const help = args[0] === '-h' || (!('error' in parsed) && parsed.flags.has('help'));
  if ('error' in parsed || help || parsed.positional.length !== 1 || parsed.values.has('checkpoint') !== parsed.values.has('vkey')) {
    if ('error' in parsed) io.err(`atc verify: ${parsed.error}`);
    io.err(usage);
    return help ? 0 : 2;
  }
  const path = parsed.positional[0] as string;
  const checkpoint = parsed.values.get('checkpoint');
  if (checkpoint !== undefined) {
    if (!isSqlitePath(path) && !isJsonLinesPath(path) && !isPostgresTarget(path)) {
      io.err('atc verify: --checkpoint needs a log (.sqlite, .db, .jsonl, postgres://…)');
      return 2;
    }
    const verified = await verifyLogPath(path, io);
    if (verified === 2) return 2;
    const checked = await verifyAgainstCheckpoint(path, checkpoint, parsed.values.get('vkey') as string, io);
    return checked !== 0 ? checked : verified;
  }
  return verifyLogPath(path, io);
}

async function verifyLogPath(path: string, io: CliIo): Promise<number> {
  if (isSqlitePath(path)) return verifySqlitePath(path, io);
  // Loaded only for a URL, so the other paths never load `pg`.
  if (isPostgresTarget(path)) return (await import('../../stores/postgres/postgresCli')).verifyPostgresUrl(path, io);
  if (isJsonLinesPath(path)) return verifyJsonLinesFile(path, io);
  return verifyEvidenceFile(path, io);
}

export const verifyCommand: CliCommand = {
  summary: 'check an evidence file, a SQLite log or a JSON Lines log (re-derived decisions); exit 1 on any problem',
  run: (args) => runVerify(args),
};

import { readFileSync } from 'node:fs';
import { verifyEvidence, type EvidenceReport } from '../../evidence/verifyEvidence';
import { formatSummary } from '../../evidence/summaryTable';
import { claims } from '../../evidence/claims';
import type { CliCommand } from '../command';
import { verifySqliteFile } from '../../stores/sqlite/sqliteVerify';
import { isJsonLinesPath, verifyJsonLinesFile } from './verifyJsonLines';
import { isPostgresTarget } from '../logTarget';
import { parseOrExit, usageError, vkeyOption, type CommandSpec } from '../options';
import { verifyAgainstCheckpoint } from './verifyCheckpoint';
import { verdictIo, type CliIo } from '../io';

export const verifySpec: CommandSpec = {
  name: 'verify',
  summary: 'check an evidence file, a SQLite log or a JSON Lines log (re-derived decisions); exit 1 on any problem',
  usage: ['<evidence.json | log.sqlite | log.db | log.jsonl | postgres://…[?schema=atc]> [--checkpoint <file> --vkey <key|@file>]'],
  description: 'Re-folds the log (sequence, hash chain) and re-runs the decider on every admission and rejection; an evidence file (from `npm run reproduce`) is also checked record by record against its logs and the published claims. Prints one verdict: "verified…" (exit 0) or "NOT VERIFIED…" (exit 1); exit 2 when the input cannot be read.',
  operands: { name: '<file or postgres:// URL>', min: 1, max: 1 },
  options: [
    { name: 'checkpoint', value: '<file>', description: 'a log only: also check that the log is this signed checkpoint\'s log or an extension of it (with --vkey)' },
    vkeyOption,
  ],
};
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

/** Verifies an evidence file written by `npm run reproduce`: exit 0 verified, 1 a problem (tampering), 2 unreadable. */
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
  return verifySqliteFile(path, io === verdictIo && process.stderr.isTTY ? { ...io, tty: process.stderr } : io);
}
// ---- end SQLite logs --------------------------------------------------------------------------

export function isSqlitePath(path: string): boolean {
  return /\.(sqlite|db)$/i.test(path);
}

/** `atc verify <file> [--checkpoint <file> --vkey <key|@file>]`; resolves to the exit code. */
export async function runVerify(args: readonly string[], io: CliIo = verdictIo): Promise<number> {
  const parsed = await parseOrExit(verifySpec, args, io);
  if (typeof parsed === 'number') return parsed;
  if (parsed.values.has('checkpoint') !== parsed.values.has('vkey')) return usageError(verifySpec, io, '--checkpoint and --vkey go together');
  const path = parsed.positional[0] as string;
  const checkpoint = parsed.values.get('checkpoint');
  if (checkpoint === undefined) return verifyLogPath(path, io);
  if (!isSqlitePath(path) && !isJsonLinesPath(path) && !isPostgresTarget(path)) return usageError(verifySpec, io, '--checkpoint needs a log (.sqlite, .db, .jsonl, postgres://…)');
  // One verdict: the log's "verified" line waits until the checkpoint has been checked too.
  let verdict: string | undefined;
  const held: CliIo = { out: (text) => (text.startsWith('verified') ? void (verdict = text) : io.out(text)), err: (text) => io.err(text) };
  const verified = await verifyLogPath(path, held);
  if (verified !== 0 || verdict === undefined) return verified;
  const checked = await verifyAgainstCheckpoint(path, checkpoint, parsed.values.get('vkey') as string, io);
  if (checked === 0) io.out(`${verdict}, consistent with checkpoint ${checkpoint}`);
  return checked;
}

async function verifyLogPath(path: string, io: CliIo): Promise<number> {
  if (isSqlitePath(path)) return verifySqlitePath(path, io);
  // Loaded only for a URL, so the other paths never load `pg`.
  if (isPostgresTarget(path)) return (await import('../postgresLog')).verifyPostgresUrl(path, io);
  if (isJsonLinesPath(path)) return verifyJsonLinesFile(path, io);
  return verifyEvidenceFile(path, io);
}

export const verifyCommand: CliCommand = {
  summary: verifySpec.summary,
  spec: verifySpec,
  run: (args) => runVerify(args),
};

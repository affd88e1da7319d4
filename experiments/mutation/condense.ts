import { functionLocator } from './enclosingFunction';

/**
 * Condenses Stryker's JSON report (mutation-testing-report-schema) into what a reviewer reads:
 * per file the counts and the score, and every surviving mutant with its line and replacement.
 * Pure: the caller reads and writes the files.
 */

/** The part of Stryker's report this reads (a report from elsewhere is checked, not trusted). */
export interface StrykerReport {
  readonly files: Readonly<Record<string, { readonly source: string; readonly mutants: readonly StrykerMutant[] }>>;
}

export interface StrykerMutant {
  readonly id: string;
  readonly mutatorName: string;
  readonly replacement?: string;
  readonly status: string;
  readonly location: { readonly start: { readonly line: number; readonly column: number }; readonly end: { readonly line: number; readonly column: number } };
}

export interface Counts {
  readonly mutants: number;
  readonly killed: number;
  readonly timeout: number;
  readonly survived: number;
  readonly noCoverage: number;
  /** Mutants that do not compile (the TypeScript checker) or crash on load: not counted in the score. */
  readonly invalid: number;
  /** Static mutants (run only while a module loads) skipped with `ignoreStatic`: not counted in the score. */
  readonly ignored: number;
  /** Killed or timed out, over killed + timed out + survived + no coverage, in percent (2 decimals); null when none. */
  readonly score: number | null;
  /** Killed alone over the same denominator: a timeout under a loaded machine may be the load, not the mutant. */
  readonly scoreKilledOnly: number | null;
}

export interface Survivor {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  /** The named functions around it (enclosingFunction.ts). */
  readonly function: string;
  /**
   * The source line it is on, trimmed (at most 200 characters). With `function`, `original`, the
   * mutator and the replacement, the key its explanation is found by: it outlives edits elsewhere
   * in the file, where a line number does not (explanations.ts).
   */
  readonly sourceLine: string;
  readonly mutator: string;
  readonly status: 'Survived' | 'NoCoverage';
  /** The original code the mutant replaced (first line, at most 120 characters). */
  readonly original: string;
  readonly replacement: string;
}

export interface FileResult extends Counts {
  readonly file: string;
}

export interface Condensed {
  readonly files: readonly FileResult[];
  readonly survivors: readonly Survivor[];
}

const empty = { mutants: 0, killed: 0, timeout: 0, survived: 0, noCoverage: 0, invalid: 0, ignored: 0 };
type Tally = { -readonly [K in keyof typeof empty]: number };

function withScore(t: Tally): Counts {
  const detected = t.killed + t.timeout;
  const valid = detected + t.survived + t.noCoverage;
  const percent = (n: number): number | null => (valid === 0 ? null : Math.round((n / valid) * 10_000) / 100);
  return { ...t, score: percent(detected), scoreKilledOnly: percent(t.killed) };
}

function tally(t: Tally, status: string): void {
  t.mutants++;
  if (status === 'Killed') t.killed++;
  else if (status === 'Timeout') t.timeout++;
  else if (status === 'Survived') t.survived++;
  else if (status === 'NoCoverage') t.noCoverage++;
  else if (status === 'Ignored') t.ignored++;
  else t.invalid++; // CompileError, RuntimeError (Pending does not occur in a finished report)
}

/** Text of the source between two 1-based line/column positions, first line only, cut to 120 characters. */
function excerpt(source: string, location: StrykerMutant['location']): string {
  const lines = source.split('\n');
  const { start, end } = location;
  const first = lines[start.line - 1] ?? '';
  const text = start.line === end.line ? first.slice(start.column - 1, end.column - 1) : `${first.slice(start.column - 1)} …`;
  return text.length > 120 ? `${text.slice(0, 119)}…` : text;
}

/** The 1-based line of `source`, trimmed and cut to 200 characters. */
export function sourceLineAt(source: string, line: number): string {
  const text = (source.split('\n')[line - 1] ?? '').trim();
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

export function condense(report: StrykerReport): Condensed {
  const files: FileResult[] = [];
  const survivors: Survivor[] = [];
  for (const file of Object.keys(report.files).sort()) {
    const entry = report.files[file];
    if (entry === undefined) continue;
    const t: Tally = { ...empty };
    let functionAt: ((line: number, column: number) => string) | undefined; // parsed once, when a mutant survives
    const sorted = [...entry.mutants].sort((a, b) => a.location.start.line - b.location.start.line || a.location.start.column - b.location.start.column);
    for (const mutant of sorted) {
      tally(t, mutant.status);
      if (mutant.status === 'Survived' || mutant.status === 'NoCoverage') {
        survivors.push({
          file,
          line: mutant.location.start.line,
          column: mutant.location.start.column,
          function: (functionAt ??= functionLocator(file, entry.source))(mutant.location.start.line, mutant.location.start.column),
          sourceLine: sourceLineAt(entry.source, mutant.location.start.line),
          mutator: mutant.mutatorName,
          status: mutant.status,
          original: excerpt(entry.source, mutant.location),
          replacement: (mutant.replacement ?? '').split('\n')[0]?.slice(0, 120) ?? '',
        });
      }
    }
    files.push({ file, ...withScore(t) });
  }
  return { files, survivors };
}

/** A file's counts with its scores computed again (results written by an older version of this script). */
export function rescore<F extends Counts>(f: F): F {
  const { mutants, killed, timeout, survived, noCoverage, invalid, ignored } = f;
  return { ...f, ...withScore({ mutants, killed, timeout, survived, noCoverage, invalid, ignored }) };
}

/** Counts and score over the files whose path starts with one of `prefixes`. */
export function total(files: readonly FileResult[], prefixes: readonly string[]): Counts {
  const t: Tally = { ...empty };
  for (const f of files) {
    if (!prefixes.some((p) => f.file.startsWith(p))) continue;
    for (const key of Object.keys(empty) as (keyof Tally)[]) t[key] += f[key];
  }
  return withScore(t);
}

/** Checks that a parsed JSON value has the report's shape before condensing it. */
export function isStrykerReport(value: unknown): value is StrykerReport {
  if (value === null || typeof value !== 'object') return false;
  const files = (value as { files?: unknown }).files;
  if (files === null || typeof files !== 'object') return false;
  return Object.values(files).every(
    (f: unknown) =>
      f !== null &&
      typeof f === 'object' &&
      typeof (f as { source?: unknown }).source === 'string' &&
      Array.isArray((f as { mutants?: unknown }).mutants) &&
      ((f as { mutants: unknown[] }).mutants).every(
        (m) => m !== null && typeof m === 'object' && typeof (m as StrykerMutant).status === 'string' && typeof (m as StrykerMutant).location?.start?.line === 'number',
      ),
  );
}

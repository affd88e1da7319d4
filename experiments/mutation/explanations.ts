import type { Survivor } from './condense';

/**
 * Why each surviving mutant survives: one file per source file under experiments/mutation/explained/
 * (docs/testing.md, "Surviving mutants"). Pure: the caller reads the files and writes the page.
 */

export const explanationKinds = ['equivalent', 'speed', 'unreachable', 'accepted'] as const;
export type ExplanationKind = (typeof explanationKinds)[number];

/**
 * Why one surviving mutant survives. Found by what the mutant is, never by where: the function it
 * is in, its source line's text, the code it replaced, the mutator and the replacement. An edit
 * elsewhere in the file moves line numbers and leaves this key alone; an edit of the line itself
 * makes the entry stale, so its reason is looked at again. Survivors that share the whole key (the
 * same line twice in one function) share the entry.
 */
export interface Explanation {
  readonly function: string;
  readonly sourceLine: string;
  readonly mutator: string;
  readonly original: string;
  readonly replacement: string;
  readonly kind: ExplanationKind;
  /** A sentence, or `#name` of an entry in the file's `reasons`. */
  readonly why: string;
}

export interface ExplanationFile {
  readonly file: string;
  readonly reasons?: Readonly<Record<string, string>>;
  readonly survivors: readonly Explanation[];
}

export interface Explained extends Survivor {
  readonly kind: ExplanationKind;
  readonly why: string;
}

export interface Check {
  /** Every survivor with its explanation, in the results' order. */
  readonly explained: readonly Explained[];
  /** Survivors no entry explains. */
  readonly missing: readonly Survivor[];
  /** Entries that match no survivor (the code moved, or the mutant is killed now). */
  readonly stale: readonly (Explanation & { readonly file: string })[];
  /** Files and entries that are malformed: a `#name` with no reason, an unknown kind, … */
  readonly problems: readonly string[];
}

type Keyed = Pick<Explanation, 'function' | 'sourceLine' | 'mutator' | 'original' | 'replacement'>;
const keyOf = (file: string, s: Keyed): string => JSON.stringify([file, s.function, s.sourceLine, s.mutator, s.original, s.replacement]);
/** How a report names an entry: its function, mutator, and what it replaced with what. */
const shownEntry = (file: string, s: Keyed): string => `${file} ${s.function}: ${s.mutator} ${JSON.stringify(s.original)} → ${JSON.stringify(s.replacement)} in ${JSON.stringify(s.sourceLine)}`;
const keyFields = ['function', 'sourceLine', 'mutator', 'original', 'replacement'] as const;

/** Checks an explanation file's shape, answering what is wrong with it (empty when nothing). */
export function explanationFileProblems(value: unknown, where: string): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [`${where}: not an object`];
  const v = value as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof v.file !== 'string' || !v.file.startsWith('src/')) problems.push(`${where}: "file" must name a file under src/`);
  const reasons = v.reasons;
  if (reasons !== undefined && (reasons === null || typeof reasons !== 'object' || Array.isArray(reasons) || Object.values(reasons).some((r) => typeof r !== 'string' || r.length === 0))) {
    problems.push(`${where}: "reasons" must map names to sentences`);
  }
  if (!Array.isArray(v.survivors)) return [...problems, `${where}: "survivors" must be an array`];
  v.survivors.forEach((entry: unknown, i: number) => {
    const at = `${where}: survivors[${i}]`;
    if (entry === null || typeof entry !== 'object') return void problems.push(`${at}: not an object`);
    const e = entry as Record<string, unknown>;
    const notStrings = keyFields.filter((k) => typeof e[k] !== 'string');
    if (notStrings.length > 0) problems.push(`${at}: ${notStrings.join(', ')} must be strings (the key a survivor is found by)`);
    if ('line' in e || 'column' in e) problems.push(`${at}: line and column go stale at the first edit: key the entry by function, sourceLine, mutator, original and replacement`);
    if (!explanationKinds.includes(e.kind as ExplanationKind)) problems.push(`${at}: kind must be one of ${explanationKinds.join(', ')}`);
    if (typeof e.why !== 'string' || e.why.trim().length === 0) problems.push(`${at}: "why" must be a sentence or #name`);
    else if (e.why.startsWith('#') && (reasons === undefined || typeof (reasons as Record<string, unknown>)[e.why.slice(1)] !== 'string')) problems.push(`${at}: no reason named ${e.why}`);
  });
  return problems;
}

/** Matches every survivor of the results with the explanation files (already shape-checked). */
export function checkExplanations(survivors: readonly Survivor[], files: readonly ExplanationFile[]): Check {
  const entries = new Map<string, { entry: Explanation; file: ExplanationFile; used: boolean }>();
  const problems: string[] = [];
  for (const file of files) {
    for (const entry of file.survivors) {
      const key = keyOf(file.file, entry);
      if (entries.has(key)) problems.push(`${shownEntry(file.file, entry)} is explained twice`);
      else entries.set(key, { entry, file, used: false });
    }
  }
  const explained: Explained[] = [];
  const missing: Survivor[] = [];
  for (const survivor of survivors) {
    const found = entries.get(keyOf(survivor.file, survivor));
    if (found === undefined) {
      missing.push(survivor);
      continue;
    }
    found.used = true;
    const why = found.entry.why.startsWith('#') ? (found.file.reasons?.[found.entry.why.slice(1)] ?? found.entry.why) : found.entry.why;
    explained.push({ ...survivor, kind: found.entry.kind, why });
  }
  const stale = [...entries.values()].filter((e) => !e.used).map(({ entry, file }) => ({ ...entry, file: file.file }));
  return { explained, missing, stale, problems };
}

/** One report line per problem: malformed entries, unexplained survivors, stale entries. */
export function checkReport(check: Check): string[] {
  return [
    ...check.problems,
    ...check.missing.map((s) => `unexplained: ${s.file}:${s.line}:${s.column} ${shownEntry(s.file, s)}`),
    ...check.stale.map((e) => `stale (matches no survivor): ${shownEntry(e.file, e)}`),
  ];
}

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const code = (text: string): string => (text.includes('`') ? `<code>${cell(text).replace(/</g, '&lt;')}</code>` : `\`${cell(text)}\``);

/** The page results/mutation-survivors.md: a table per file, and the count of each kind. */
export function renderSurvivorsPage(check: Check, measuredFiles: number): string {
  const byKind = new Map<ExplanationKind, number>();
  for (const e of check.explained) byKind.set(e.kind, (byKind.get(e.kind) ?? 0) + 1);
  const lines = [
    '# Surviving mutants, each explained',
    '',
    '<!-- Generated by `node dist/experiments/mutation/explain.js` from results/mutation.json and',
    '     experiments/mutation/explained/; edit those, not this page. -->',
    '',
    `Every mutant that survived the mutation run recorded in results/mutation.json (${measuredFiles} files; see`,
    'docs/testing.md for the run and its scores), with why no test kills it. Kinds:',
    '',
    '- **equivalent**: no input tells the mutant from the original, by any result, event, error or thrown value;',
    '- **speed**: the mutant changes only how fast the code is or how much memory it takes (a fast path, a cache);',
    '- **unreachable**: defensive code that no caller reaches (the entry names what guarantees it);',
    '- **accepted**: observable, and deliberately not pinned (the entry says why).',
    '',
    `| kind | survivors |`,
    `| --- | ---: |`,
    ...[...explanationKinds].map((k) => `| ${k} | ${byKind.get(k) ?? 0} |`),
    `| **all** | **${check.explained.length}** |`,
    '',
  ];
  check.explained.forEach((e, i) => {
    if (i === 0 || check.explained[i - 1]?.file !== e.file) lines.push(`## ${e.file}`, '', '| line:col | function | mutant | kind | why it survives |', '| --- | --- | --- | --- | --- |');
    lines.push(`| ${e.line}:${e.column} | ${code(e.function)} | ${e.mutator}: ${code(e.original)} → ${code(e.replacement)} | ${e.kind} | ${cell(e.why)} |`);
    if (check.explained[i + 1]?.file !== e.file) lines.push('');
  });
  return `${lines.join('\n')}\n`;
}

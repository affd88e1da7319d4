import type { Survivor } from '../../experiments/mutation/condense';
import { checkExplanations, checkReport, explanationFileProblems, renderSurvivorsPage, type ExplanationFile } from '../../experiments/mutation/explanations';

const survivor = (line: number, replacement = 'false', file = 'src/domain/x.ts'): Survivor => ({
  file, line, column: 5, function: 'f', sourceLine: 'if (a === b) return;', mutator: 'ConditionalExpression', status: 'Survived', original: 'a === b', replacement,
});
const entry = (why: string, replacement = 'false') => ({ function: 'f', sourceLine: 'if (a === b) return;', mutator: 'ConditionalExpression', original: 'a === b', replacement, kind: 'equivalent' as const, why });

describe('mutation survivor explanations', () => {
  it('matches a survivor to the entry with its function, source line, original, mutator and replacement', () => {
    const file: ExplanationFile = { file: 'src/domain/x.ts', survivors: [entry('b is a itself here.')] };
    const check = checkExplanations([survivor(3)], [file]);
    expect(check.missing).toEqual([]);
    expect(check.stale).toEqual([]);
    expect(check.explained).toEqual([{ ...survivor(3), kind: 'equivalent', why: 'b is a itself here.' }]);
  });

  it('still matches when an edit elsewhere in the file moved the survivor to another line and column', () => {
    const file: ExplanationFile = { file: 'src/domain/x.ts', survivors: [entry('why')] };
    const check = checkExplanations([{ ...survivor(40), column: 9 }], [file]);
    expect(check.missing).toEqual([]);
    expect(check.stale).toEqual([]);
  });

  it.each([
    ['its line was edited', { sourceLine: 'if (a === b && c) return;' }],
    ['it moved to another function', { function: 'g' }],
    ['it replaces other code', { original: 'a !== b' }],
  ])('reports the entry as stale and the survivor as unexplained when %s', (_, change) => {
    const file: ExplanationFile = { file: 'src/domain/x.ts', survivors: [entry('why')] };
    const moved = { ...survivor(3), ...change };
    const check = checkExplanations([moved], [file]);
    expect(check.missing).toEqual([moved]);
    expect(check.stale).toEqual([{ ...entry('why'), file: 'src/domain/x.ts' }]);
    expect(checkReport(check)).toEqual([
      `unexplained: src/domain/x.ts:3:5 src/domain/x.ts ${moved.function}: ConditionalExpression ${JSON.stringify(moved.original)} → "false" in ${JSON.stringify(moved.sourceLine)}`,
      'stale (matches no survivor): src/domain/x.ts f: ConditionalExpression "a === b" → "false" in "if (a === b) return;"',
    ]);
  });

  it('reports a survivor no entry explains, and an entry whose replacement differs as stale', () => {
    const file: ExplanationFile = { file: 'src/domain/x.ts', survivors: [entry('why', 'true')] };
    const check = checkExplanations([survivor(3)], [file]);
    expect(check.missing).toEqual([survivor(3)]);
    expect(check.stale).toEqual([{ ...entry('why', 'true'), file: 'src/domain/x.ts' }]);
  });

  it('does not let one file explain another file’s survivor', () => {
    const file: ExplanationFile = { file: 'src/domain/y.ts', survivors: [entry('why')] };
    expect(checkExplanations([survivor(3)], [file]).missing).toHaveLength(1);
  });

  it('resolves #name to the file’s shared reason', () => {
    const file: ExplanationFile = { file: 'src/domain/x.ts', reasons: { fast: 'Only the fast path.' }, survivors: [entry('#fast')] };
    expect(checkExplanations([survivor(3)], [file]).explained[0]?.why).toBe('Only the fast path.');
  });

  it('reports an entry given twice', () => {
    const file: ExplanationFile = { file: 'src/domain/x.ts', survivors: [entry('one'), entry('two')] };
    expect(checkExplanations([survivor(3)], [file]).problems).toEqual(['src/domain/x.ts f: ConditionalExpression "a === b" → "false" in "if (a === b) return;" is explained twice']);
  });

  it('explains with one entry the survivors that share its whole key (the same line twice in a function)', () => {
    const file: ExplanationFile = { file: 'src/domain/x.ts', survivors: [entry('same reason')] };
    const check = checkExplanations([survivor(3), survivor(7)], [file]);
    expect(check.explained.map((e) => [e.line, e.why])).toEqual([[3, 'same reason'], [7, 'same reason']]);
    expect(check.stale).toEqual([]);
  });

  it('refuses malformed files, naming the field', () => {
    expect(explanationFileProblems([], 'f.json')).toEqual(['f.json: not an object']);
    expect(explanationFileProblems({ file: 'lib/x.ts', survivors: [] }, 'f.json')).toEqual(['f.json: "file" must name a file under src/']);
    expect(explanationFileProblems({ file: 'src/x.ts' }, 'f.json')).toEqual(['f.json: "survivors" must be an array']);
    expect(explanationFileProblems({ file: 'src/x.ts', survivors: [{ ...entry('w'), kind: 'maybe' }] }, 'f.json')).toEqual([
      'f.json: survivors[0]: kind must be one of equivalent, speed, unreachable, accepted',
    ]);
    expect(explanationFileProblems({ file: 'src/x.ts', survivors: [entry('#nope')] }, 'f.json')).toEqual(['f.json: survivors[0]: no reason named #nope']);
    expect(explanationFileProblems({ file: 'src/x.ts', survivors: [entry(' ')] }, 'f.json')).toEqual(['f.json: survivors[0]: "why" must be a sentence or #name']);
    expect(explanationFileProblems({ file: 'src/x.ts', survivors: [{ ...entry('w'), line: 3, column: 5 }] }, 'f.json')).toEqual([
      'f.json: survivors[0]: line and column go stale at the first edit: key the entry by function, sourceLine, mutator, original and replacement',
    ]);
    expect(explanationFileProblems({ file: 'src/x.ts', reasons: { a: 3 }, survivors: [] }, 'f.json')).toEqual(['f.json: "reasons" must map names to sentences']);
    expect(explanationFileProblems({ file: 'src/x.ts', reasons: { a: 'A.' }, survivors: [entry('#a')] }, 'f.json')).toEqual([]);
    expect(explanationFileProblems({ file: 'src/x.ts', survivors: [{ ...entry('w'), original: 1, sourceLine: undefined }] }, 'f.json')).toEqual([
      'f.json: survivors[0]: sourceLine, original must be strings (the key a survivor is found by)',
    ]);
  });

  it('renders a table per file, escaping pipes and counting each kind', () => {
    const files: ExplanationFile[] = [
      { file: 'src/domain/x.ts', survivors: [entry('a | b'), { ...entry('fast', 'true'), kind: 'speed' }] },
      { file: 'src/domain/y.ts', survivors: [entry('c')] },
    ];
    const page = renderSurvivorsPage(checkExplanations([survivor(3), survivor(4, 'true'), survivor(1, 'false', 'src/domain/y.ts')], files), 2);
    expect(page).toContain('| equivalent | 2 |\n| speed | 1 |\n| unreachable | 0 |\n| accepted | 0 |\n| **all** | **3** |');
    expect(page).toContain('## src/domain/x.ts\n\n| line:col | function | mutant | kind | why it survives |\n| --- | --- | --- | --- | --- |\n| 3:5 | `f` | ConditionalExpression: `a === b` → `false` | equivalent | a \\| b |\n| 4:5 |');
    expect(page).toContain('## src/domain/y.ts\n');
    expect(page.indexOf('src/domain/x.ts')).toBeLessThan(page.indexOf('## src/domain/y.ts'));
  });
});

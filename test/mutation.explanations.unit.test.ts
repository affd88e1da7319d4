import type { Survivor } from '../experiments/mutation/condense';
import { checkExplanations, explanationFileProblems, renderSurvivorsPage, type ExplanationFile } from '../experiments/mutation/explanations';

const survivor = (line: number, replacement = 'false', file = 'src/domain/x.ts'): Survivor => ({
  file, line, column: 5, mutator: 'ConditionalExpression', status: 'Survived', original: 'a === b', replacement,
});
const entry = (line: number, why: string, replacement = 'false') => ({ line, column: 5, mutator: 'ConditionalExpression', replacement, kind: 'equivalent' as const, why });

describe('mutation survivor explanations', () => {
  it('matches a survivor to the entry with its line, column, mutator and replacement', () => {
    const file: ExplanationFile = { file: 'src/domain/x.ts', survivors: [entry(3, 'b is a itself here.')] };
    const check = checkExplanations([survivor(3)], [file]);
    expect(check.missing).toEqual([]);
    expect(check.stale).toEqual([]);
    expect(check.explained).toEqual([{ ...survivor(3), kind: 'equivalent', why: 'b is a itself here.' }]);
  });

  it('reports a survivor no entry explains, and an entry whose replacement differs as stale', () => {
    const file: ExplanationFile = { file: 'src/domain/x.ts', survivors: [entry(3, 'why', 'true')] };
    const check = checkExplanations([survivor(3)], [file]);
    expect(check.missing).toEqual([survivor(3)]);
    expect(check.stale).toEqual([{ ...entry(3, 'why', 'true'), file: 'src/domain/x.ts' }]);
  });

  it('does not let one file explain another file’s survivor', () => {
    const file: ExplanationFile = { file: 'src/domain/y.ts', survivors: [entry(3, 'why')] };
    expect(checkExplanations([survivor(3)], [file]).missing).toHaveLength(1);
  });

  it('resolves #name to the file’s shared reason', () => {
    const file: ExplanationFile = { file: 'src/domain/x.ts', reasons: { fast: 'Only the fast path.' }, survivors: [entry(3, '#fast')] };
    expect(checkExplanations([survivor(3)], [file]).explained[0]?.why).toBe('Only the fast path.');
  });

  it('reports an entry given twice', () => {
    const file: ExplanationFile = { file: 'src/domain/x.ts', survivors: [entry(3, 'one'), entry(3, 'two')] };
    expect(checkExplanations([survivor(3)], [file]).problems).toEqual(['src/domain/x.ts:3:5: ConditionalExpression → false is explained twice']);
  });

  it('tells apart two survivors sharing line, column, mutator and replacement by the code they replaced', () => {
    const a = { ...survivor(3), original: 'a && b' };
    const b = { ...survivor(3), original: 'a' };
    const file: ExplanationFile = { file: 'src/domain/x.ts', survivors: [{ ...entry(3, 'for a'), original: 'a' }, { ...entry(3, 'for a && b'), original: 'a && b' }] };
    const check = checkExplanations([a, b], [file]);
    expect(check.explained.map((e) => e.why)).toEqual(['for a && b', 'for a']);
    expect(check.stale).toEqual([]);
    expect(checkExplanations([a, b], [{ file: 'src/domain/x.ts', survivors: [{ ...entry(3, 'for a'), original: 'a' }] }]).missing).toEqual([a]);
  });

  it('refuses malformed files, naming the field', () => {
    expect(explanationFileProblems([], 'f.json')).toEqual(['f.json: not an object']);
    expect(explanationFileProblems({ file: 'lib/x.ts', survivors: [] }, 'f.json')).toEqual(['f.json: "file" must name a file under src/']);
    expect(explanationFileProblems({ file: 'src/x.ts' }, 'f.json')).toEqual(['f.json: "survivors" must be an array']);
    expect(explanationFileProblems({ file: 'src/x.ts', survivors: [{ ...entry(1, 'w'), kind: 'maybe' }] }, 'f.json')).toEqual([
      'f.json: survivors[0]: kind must be one of equivalent, speed, unreachable, accepted',
    ]);
    expect(explanationFileProblems({ file: 'src/x.ts', survivors: [entry(1, '#nope')] }, 'f.json')).toEqual(['f.json: survivors[0]: no reason named #nope']);
    expect(explanationFileProblems({ file: 'src/x.ts', survivors: [entry(1, ' ')] }, 'f.json')).toEqual(['f.json: survivors[0]: "why" must be a sentence or #name']);
    expect(explanationFileProblems({ file: 'src/x.ts', survivors: [{ ...entry(1, 'w'), line: 1.5 }] }, 'f.json')).toEqual(['f.json: survivors[0]: line and column must be integers']);
    expect(explanationFileProblems({ file: 'src/x.ts', reasons: { a: 3 }, survivors: [] }, 'f.json')).toEqual(['f.json: "reasons" must map names to sentences']);
    expect(explanationFileProblems({ file: 'src/x.ts', reasons: { a: 'A.' }, survivors: [entry(1, '#a')] }, 'f.json')).toEqual([]);
    expect(explanationFileProblems({ file: 'src/x.ts', survivors: [{ ...entry(1, 'w'), original: 1 }] }, 'f.json')).toEqual(['f.json: survivors[0]: original must be a string']);
  });

  it('renders a table per file, escaping pipes and counting each kind', () => {
    const files: ExplanationFile[] = [
      { file: 'src/domain/x.ts', survivors: [entry(3, 'a | b'), { ...entry(4, 'fast'), kind: 'speed' }] },
      { file: 'src/domain/y.ts', survivors: [entry(1, 'c')] },
    ];
    const page = renderSurvivorsPage(checkExplanations([survivor(3), survivor(4), survivor(1, 'false', 'src/domain/y.ts')], files), 2);
    expect(page).toContain('| equivalent | 2 |\n| speed | 1 |\n| unreachable | 0 |\n| accepted | 0 |\n| **all** | **3** |');
    expect(page).toContain('## src/domain/x.ts\n\n| line:col | mutant | kind | why it survives |\n| --- | --- | --- | --- |\n| 3:5 | ConditionalExpression: `a === b` → `false` | equivalent | a \\| b |\n| 4:5 |');
    expect(page).toContain('## src/domain/y.ts\n');
    expect(page.indexOf('src/domain/x.ts')).toBeLessThan(page.indexOf('## src/domain/y.ts'));
  });
});

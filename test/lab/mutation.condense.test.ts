import { condense, isStrykerReport, total, type StrykerMutant } from '../../experiments/mutation/condense';

// The script that turns Stryker's JSON report into results/mutation.json.

const at = (line: number, column: number, endColumn: number): StrykerMutant['location'] => ({ start: { line, column }, end: { line, column: endColumn } });
const mutant = (id: string, status: string, location: StrykerMutant['location'], replacement = 'false'): StrykerMutant => ({ id, mutatorName: 'BooleanLiteral', replacement, status, location });

const report = {
  files: {
    'src/domain/b.ts': { source: 'const x = true;\nconst y = a > b;\n', mutants: [mutant('3', 'Survived', at(2, 11, 16), 'a >= b'), mutant('1', 'Killed', at(1, 11, 15)), mutant('2', 'Timeout', at(1, 11, 15))] },
    'src/domain/a.ts': { source: 'f();\n', mutants: [mutant('4', 'NoCoverage', at(1, 1, 4), '{}'), mutant('5', 'CompileError', at(1, 1, 4)), mutant('6', 'Ignored', at(1, 1, 4))] },
    'src/tools/c.ts': { source: 'g();\n', mutants: [mutant('7', 'Killed', at(1, 1, 4))] },
  },
};

describe('condense', () => {
  it('scores a file as killed and timed out over killed, timed out, survived and not covered', () => {
    const b = condense(report).files.find((f) => f.file === 'src/domain/b.ts');
    expect(b).toEqual({ file: 'src/domain/b.ts', mutants: 3, killed: 1, timeout: 1, survived: 1, noCoverage: 0, invalid: 0, ignored: 0, score: 66.67, scoreKilledOnly: 33.33 });
  });

  it('leaves compile errors and ignored static mutants out of the score', () => {
    const a = condense(report).files.find((f) => f.file === 'src/domain/a.ts');
    expect(a).toMatchObject({ mutants: 3, noCoverage: 1, invalid: 1, ignored: 1, score: 0 });
  });

  it('gives no score to a file whose mutants are all invalid or ignored', () => {
    const only = condense({ files: { 'src/x.ts': { source: 'f();\n', mutants: [mutant('1', 'CompileError', at(1, 1, 4))] } } });
    expect(only.files[0]?.score).toBeNull();
  });

  it('lists surviving and uncovered mutants with the code they replaced, files in path order', () => {
    expect(condense(report).survivors).toEqual([
      { file: 'src/domain/a.ts', line: 1, column: 1, function: '(top level)', sourceLine: 'f();', mutator: 'BooleanLiteral', status: 'NoCoverage', original: 'f()', replacement: '{}' },
      { file: 'src/domain/b.ts', line: 2, column: 11, function: '(top level)', sourceLine: 'const y = a > b;', mutator: 'BooleanLiteral', status: 'Survived', original: 'a > b', replacement: 'a >= b' },
    ]);
  });

  it('names the functions around a survivor, so its explanation outlives edits elsewhere in the file', () => {
    const source = 'export class Store {\n  get(key: string) {\n    const check = (k: string) => k.length > 0;\n    return [1].map(() => check(key));\n  }\n}\n';
    const found = condense({ files: { 'src/s.ts': { source, mutants: [mutant('1', 'Survived', at(3, 34, 46), 'k.length >= 0'), mutant('2', 'Survived', at(4, 26, 36), 'undefined')] } } });
    expect(found.survivors.map((s) => [s.function, s.sourceLine])).toEqual([
      ['Store.get.check', 'const check = (k: string) => k.length > 0;'],
      ['Store.get', 'return [1].map(() => check(key));'],
    ]);
  });

  it('totals a group of folders', () => {
    const { files } = condense(report);
    expect(total(files, ['src/domain/'])).toMatchObject({ mutants: 6, killed: 1, timeout: 1, survived: 1, noCoverage: 1, score: 50 });
    expect(total(files, ['src/tools/'])).toMatchObject({ mutants: 1, score: 100 });
  });

  it('cuts a multi-line original to its first line', () => {
    const multi = condense({ files: { 'src/m.ts': { source: 'if (a) {\n  b();\n}\n', mutants: [mutant('1', 'Survived', { start: { line: 1, column: 8 }, end: { line: 3, column: 2 } }, '{}')] } } });
    expect(multi.survivors[0]?.original).toBe('{ …');
  });

  it('accepts a Stryker report shape and refuses others', () => {
    expect(isStrykerReport(report)).toBe(true);
    expect(isStrykerReport(null)).toBe(false);
    expect(isStrykerReport({ files: { 'a.ts': { source: 1, mutants: [] } } })).toBe(false);
    expect(isStrykerReport({ files: { 'a.ts': { source: '', mutants: [{ status: 'Killed' }] } } })).toBe(false);
  });
});

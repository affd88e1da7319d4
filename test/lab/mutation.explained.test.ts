import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { explainResults } from '../../experiments/mutation/explain';

// results/mutation.json, experiments/mutation/explained/ and results/mutation-survivors.md are committed
// together: every survivor of the recorded run has its reason, no reason outlives its mutant, and
// the page is the one they make (`node dist/experiments/mutation/explain.js` writes it).
describe('the recorded mutation run', () => {
  const { page, report } = explainResults();
  it('explains every surviving mutant, and no mutant that is gone', () => {
    expect(report).toEqual([]);
  });
  it('has results/mutation-survivors.md rendered from its explanations', () => {
    expect(readFileSync(path.join(__dirname, '..', '..', 'results', 'mutation-survivors.md'), 'utf8')).toBe(page);
  });
});

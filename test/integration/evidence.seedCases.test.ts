import { readFileSync } from 'node:fs';
import path from 'node:path';
import { claims } from '../../src/evidence/claims';
import { isSeedCase, seedCaseCount, sequentialCases } from '../../src/evidence/sequentialCases';
import { formatSummary } from '../../src/evidence/summaryTable';
import type { Evidence } from '../../src/evidence/types';
import { verifyEvidence } from '../../src/evidence/verifyEvidence';

// The seed published 25 sequential cases (3 allowed, 22 adversarial); ours has 31. The summary
// counts the seed's apart so its table reads line by line against the seed's.
describe("the seed's 25 cases, apart", () => {
  it('are the first 25 of the case table: 3 allowed and 22 adversarial, and the 6 after them are new', () => {
    const seed = sequentialCases.slice(0, seedCaseCount);
    expect([seed.filter((c) => c.kind === 'allowed').length, seed.filter((c) => c.kind === 'adversarial').length]).toEqual([3, 22]);
    expect(sequentialCases.filter((c) => !isSeedCase(c.name)).map((c) => c.name)).toEqual(['meter-budget-exhausted', 'allowed-rated-read', 'rate-limited', 'allowed-keyed-write', 'idempotency-conflict', 'idempotency-keys-exhausted']);
  });

  it("the claimed table shows the seed's published rows, then the added cases", () => {
    const table = formatSummary(claims);
    expect(table).toMatch(/Seed's 25 cases: allowed sequential controls +\| 3\/3 admitted/);
    expect(table).toMatch(/Seed's 25 cases: adversarial or budget-exhausted +\| 22\/22 rejected/);
    expect(table).toMatch(/Seed's 25 cases: rejected calls that modified the store \| 0\/22/);
    expect(table).toMatch(/Added since: allowed controls +\| 2\/2 admitted/);
    expect(table).toMatch(/Added since: adversarial or budget-exhausted +\| 4\/4 rejected/);
  });

  it("an evidence file whose stored seed counts differ from the logs' does not verify", () => {
    const doc = JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'results', 'reference.json'), 'utf8')) as Evidence;
    expect(verifyEvidence(doc).ok).toBe(true);
    const edited = { ...doc, summary: { ...doc.summary, sequentialSeed: { ...doc.summary.sequentialSeed, adversarial: { total: 22, rejected: 21 } } } };
    const report = verifyEvidence(edited);
    expect(report.ok).toBe(false);
    expect(report.problems.map((p) => p.where)).toContain('summary');
  });
});

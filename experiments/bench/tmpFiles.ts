import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** A fresh directory for one scenario's database files (under `parent`, default the OS's temp dir), removed by `cleanup`. */
export function scratchDir(name: string, parent: string = os.tmpdir()): { dir: string; file(name: string): string; cleanup(): void } {
  const dir = mkdtempSync(path.join(parent, `atc-bench-${name}-`));
  return { dir, file: (f) => path.join(dir, f), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

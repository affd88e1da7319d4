import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// docs/budgets.md's worked example (an agent spending against a dollar cap) must run as written.
const root = path.resolve(__dirname, '..');

it("docs/budgets.md's dollar-cap example runs, its assertions hold, and its log verifies", () => {
  const doc = fs.readFileSync(path.join(root, 'docs', 'budgets.md'), 'utf8');
  const example = /## Worked example[^\n]*\n[\s\S]*?```js\n([\s\S]*?)```/.exec(doc)?.[1];
  expect(example).toBeDefined();
  expect(example).toContain('usd_micros');
  expect(example).toContain('ctx.report');
  const project = fs.mkdtempSync(path.join(os.tmpdir(), 'atc-budgets-'));
  try {
    fs.mkdirSync(path.join(project, 'node_modules'));
    fs.symlinkSync(root, path.join(project, 'node_modules', 'agent-tool-capabilities'), 'dir');
    fs.writeFileSync(path.join(project, 'example.mjs'), example as string);
    const r = spawnSync(process.execPath, ['example.mjs'], { cwd: project, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toBe('true');
  } finally {
    fs.rmSync(project, { recursive: true, force: true });
  }
});

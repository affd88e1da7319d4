import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// The README's example must run as written: extract it and execute it against the built package.
const root = path.resolve(__dirname, '..');

it('the README example runs and prints what its comments say', () => {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  const example = /## Example\s+```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  expect(example).toBeDefined();
  expect((example as string).split('\n').filter((l) => l.trim() !== '').length).toBeLessThanOrEqual(25);
  const project = fs.mkdtempSync(path.join(os.tmpdir(), 'atc-readme-'));
  try {
    fs.mkdirSync(path.join(project, 'node_modules'));
    fs.symlinkSync(root, path.join(project, 'node_modules', 'agent-tool-capabilities'), 'dir');
    fs.writeFileSync(path.join(project, 'example.mjs'), example as string);
    const r = spawnSync(process.execPath, ['example.mjs'], { cwd: project, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/status: 'completed'[\s\S]*value: 'saved'/);
    expect(r.stdout).toMatch(/status: 'rejected'[\s\S]*reason: 'invalid_resource'/);
    expect(r.stdout.trim().endsWith('true')).toBe(true);
  } finally {
    fs.rmSync(project, { recursive: true, force: true });
  }
});

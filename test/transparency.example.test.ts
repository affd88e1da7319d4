import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// docs/transparency.md's worked example must run as written: extract it and execute it against the
// built package (it asserts as it goes; its printed lines are what its comments say).
const root = path.resolve(__dirname, '..');

it('the transparency worked example publishes, proves one decision and detects a rollback', () => {
  const doc = fs.readFileSync(path.join(root, 'docs', 'transparency.md'), 'utf8');
  const example = /## Worked example[\s\S]*?```js\n([\s\S]*?)```/.exec(doc)?.[1];
  expect(example).toBeDefined();
  const project = fs.mkdtempSync(path.join(os.tmpdir(), 'atc-transparency-doc-'));
  try {
    fs.mkdirSync(path.join(project, 'node_modules'));
    fs.symlinkSync(root, path.join(project, 'node_modules', 'agent-tool-capabilities'), 'dir');
    fs.writeFileSync(path.join(project, 'example.mjs'), example as string);
    const r = spawnSync(process.execPath, ['example.mjs'], { cwd: project, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout.trim().split('\n')).toEqual(['example.com/ledger 8', 'true 3 call.admitted', 'false truncated', 'rollback refused']);
  } finally {
    fs.rmSync(project, { recursive: true, force: true });
  }
});

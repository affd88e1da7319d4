import { readFileSync } from 'node:fs';
import path from 'node:path';
import { docExample, packageRoot, runAsConsumer } from '../support/consumerProject';

// The README's example must run as written: extract it and execute it against the built package.
it('the README example runs and prints what its comments say', () => {
  const example = docExample('README.md', /## Example\s[\s\S]*?```js\n([\s\S]*?)```/);
  expect(example).toBeDefined();
  expect((example as string).split('\n').filter((l) => l.trim() !== '').length).toBeLessThanOrEqual(25);
  const r = runAsConsumer(example as string, 'atc-readme-');
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  expect(r.stdout).toMatch(/status: 'completed'[\s\S]*value: 'saved'/);
  expect(r.stdout).toMatch(/status: 'rejected'[\s\S]*reason: 'invalid_resource'/);
  expect(r.stdout.trim().endsWith('true')).toBe(true);
});

it('the README leads a user in: install line before the example, an MCP quick start, the two commands, links to the figures', () => {
  const readme = readFileSync(path.join(packageRoot, 'README.md'), 'utf8');
  const at = (text: string): number => readme.indexOf(text);
  expect(at('npm install agent-tool-capabilities')).toBeGreaterThan(0);
  expect(at('npm install agent-tool-capabilities')).toBeLessThan(at('## Example'));
  expect(at('## MCP quick start')).toBeGreaterThan(at('## Example'));
  expect(readme).toContain('npm ci && npm run build && npm run experiment');
  expect(readme).toMatch(/^npm test\s/m);
  for (const link of ['docs/performance.md', 'results/reference.json', 'docs/evidence.md']) expect(readme).toContain(`(${link})`);
  // Benchmark minutiae live in docs/performance.md: no table of scenarios here.
  expect(readme).not.toMatch(/^\| scenario/m);
});

import { docExample, runAsConsumer } from './support/consumerProject';

// The README's example must run as written: extract it and execute it against the built package.
it('the README example runs and prints what its comments say', () => {
  const example = docExample('README.md', /## Example\s+```ts\n([\s\S]*?)```/);
  expect(example).toBeDefined();
  expect((example as string).split('\n').filter((l) => l.trim() !== '').length).toBeLessThanOrEqual(25);
  const r = runAsConsumer(example as string, 'atc-readme-');
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  expect(r.stdout).toMatch(/status: 'completed'[\s\S]*value: 'saved'/);
  expect(r.stdout).toMatch(/status: 'rejected'[\s\S]*reason: 'invalid_resource'/);
  expect(r.stdout.trim().endsWith('true')).toBe(true);
});

import { docExample, runAsConsumer } from '../support/consumerProject';

// docs/budgets.md's worked example (an agent spending against a dollar cap) must run as written.
it("docs/budgets.md's dollar-cap example runs, its assertions hold, and its log verifies", () => {
  const example = docExample('docs/budgets.md', /## Worked example[^\n]*\n[\s\S]*?```js\n([\s\S]*?)```/);
  expect(example).toBeDefined();
  expect(example).toContain('usd_micros');
  expect(example).toContain('ctx.report');
  const r = runAsConsumer(example as string, 'atc-budgets-');
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  expect(r.stdout.trim()).toBe('true');
});

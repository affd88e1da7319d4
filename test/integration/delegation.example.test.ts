import { docExample, runAsConsumer } from '../support/consumerProject';

// docs/delegation.md's worked example must run as written (its asserts check what its comments say).
it("docs/delegation.md's orchestrator → sub-agents example runs, its assertions hold, and its log verifies", () => {
  const example = docExample('docs/delegation.md', /## Worked example[^\n]*\n[\s\S]*?```js\n([\s\S]*?)```/);
  expect(example).toBeDefined();
  expect(example).toContain('attenuate');
  const r = runAsConsumer(example as string, 'atc-delegation-');
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  expect(r.stdout.trim()).toBe('true');
});

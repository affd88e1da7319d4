import { docExample, runAsConsumer } from '../support/consumerProject';

// docs/transparency.md's worked example must run as written: extract it and execute it against the
// built package (it asserts as it goes; its printed lines are what its comments say).
it('the transparency worked example publishes, proves one decision and detects a rollback', () => {
  const example = docExample('docs/transparency.md', /## Worked example[\s\S]*?```js\n([\s\S]*?)```/);
  expect(example).toBeDefined();
  const r = runAsConsumer(example as string, 'atc-transparency-doc-');
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  expect(r.stdout.trim().split('\n')).toEqual(['example.com/ledger 8', 'true 3 call.admitted', 'false truncated', 'rollback refused']);
});

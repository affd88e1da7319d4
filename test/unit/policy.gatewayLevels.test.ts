import { gatewayPolicyProblems, problemLevel } from '../../src/policy/gatewayPolicyProblems';

// Which lint problems stop `atc gateway` from starting (errors) and which it only reports (warnings).
const now = Date.parse('2026-06-01T12:00:00Z');
const tools = [{ name: 'files__read', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } }];
const ok = { tools: ['files__read'], resources: { files__read: ['fs:{path}'] }, scopes: ['fs:/srv/'], expiresIn: '1h', budget: { calls: 5, inputBytes: 100 } };

test('a scope with no effect and a deny-all budget are warnings; everything else is an error', () => {
  expect(['unreachable_scope', 'zero_budget'].map((c) => problemLevel(c as never))).toEqual(['warning', 'warning']);
  const errors = ['malformed', 'unknown_tool', 'undeclared_property', 'narrowing_invalid', 'undeclared_argument', 'unbound_tool', 'expired'] as const;
  expect(errors.map((c) => problemLevel(c))).toEqual(errors.map(() => 'error'));
});

test('each policy is checked on its own, with pointers into the config and its name', () => {
  const problems = gatewayPolicyProblems(
    [
      ['ok', ok],
      ['old', { ...ok, expiresIn: undefined, expiresAt: '2026-05-01T00:00:00Z' }],
      ['a/b', { ...ok, tools: ['files__read', 'x'], resources: { ...ok.resources, x: [] } }],
    ],
    tools,
    now,
  );
  expect(problems.map((p) => [p.policy, p.pointer, p.code, p.level])).toEqual([
    ['old', '/policies/old/expiresAt', 'expired', 'error'],
    ['a/b', '/policies/a~1b/tools/1', 'unknown_tool', 'error'],
  ]);
});

import { parsePolicy, policyIssueOptions, checkPolicyTools, PolicyError } from '../../src/integrations/mcp/policy';

const valid = { tools: ['read_file'], resources: { read_file: ['fs:{path}'] }, scopes: ['fs:/srv/project/'], expiresIn: '8h', budget: { calls: 10, inputBytes: 1000 } };
const text = (value: unknown): string => JSON.stringify(value);

function problem(value: unknown): string {
  try {
    parsePolicy(typeof value === 'string' ? value : text(value));
  } catch (error) {
    expect(error).toBeInstanceOf(PolicyError);
    return (error as Error).message;
  }
  throw new Error('the policy was accepted');
}

describe('policy files', () => {
  it('accepts a well-formed policy and turns expiresIn into expiresAt from now', () => {
    const options = policyIssueOptions(parsePolicy(text(valid)), 1_000);
    expect(options).toEqual({ tools: ['read_file'], budget: { calls: 10, inputBytes: 1000 }, expiresAt: 1_000 + 8 * 3_600_000, resources: ['fs:/srv/project/'], resourceTemplates: { read_file: ['fs:{path}'] } });
  });

  it('accepts budget meters and a rate window and passes them to issue as they are', () => {
    const budget = { calls: 10, inputBytes: 1000, meters: { usd_micros: 5_000_000 }, rate: { calls: 3, windowMs: 60_000 } };
    expect(policyIssueOptions(parsePolicy(text({ ...valid, budget })), 0).budget).toEqual(budget);
  });

  it('accepts callTimeoutMs and passes it to issue', () => {
    expect(policyIssueOptions(parsePolicy(text({ ...valid, callTimeoutMs: 30_000 })), 0).callTimeoutMs).toBe(30_000);
  });

  it('leaves callTimeoutMs out of the issue options when the policy has none', () => {
    expect(policyIssueOptions(parsePolicy(text(valid)), 0)).not.toHaveProperty('callTimeoutMs');
  });

  it.each([
    [{ ...valid, scopes: ['fs:/srv/../etc/'] }, /^policy scopes\[0\]: is not a canonical scope/],
    [{ ...valid, budget: { calls: -1, inputBytes: 1 } }, /^policy budget\.calls: /],
    [{ ...valid, budget: { calls: 1, inputBytes: 1, meters: { usd: -1 } } }, /^policy budget\.meters\.usd: must be >= 0/],
    [{ ...valid, budget: { calls: 1, inputBytes: 1, meters: { 'US Dollars': 1 } } }, /^policy budget\.meters\["US Dollars"\]: is not a meter name/],
    [{ ...valid, budget: { calls: 1, inputBytes: 1, meters: { usd: 1.5 } } }, /^policy budget\.meters\.usd: must be integer/],
    [{ ...valid, budget: { calls: 1, inputBytes: 1, rate: { calls: 0, windowMs: 1 } } }, /^policy budget\.rate\.calls: must be >= 1/],
    [{ ...valid, budget: { calls: 1, inputBytes: 1, rate: { calls: 1 } } }, /^policy budget\.rate\.windowMs: /],
    [{ ...valid, budget: { calls: 1, inputBytes: 1, rate: { calls: 1, windowMs: 1, burst: 2 } } }, /^policy budget\.rate\.burst: is not a policy field/],
    [{ ...valid, callTimeoutMs: 0 }, /^policy callTimeoutMs: must be >= 1/],
    [{ ...valid, callTimeoutMs: -5 }, /^policy callTimeoutMs: must be >= 1/],
    [{ ...valid, callTimeoutMs: 1.5 }, /^policy callTimeoutMs: must be integer/],
    [{ ...valid, callTimeoutMs: '1000' }, /^policy callTimeoutMs: must be integer/],
    [{ ...valid, callTimeoutMs: Number.MAX_SAFE_INTEGER + 2 }, /^policy callTimeoutMs: must be <= 9007199254740991/],
    [{ ...valid, toolz: [] }, /^policy toolz: is not a policy field/],
    [{ ...valid, tools: [] }, /^policy tools: /],
    [{ ...valid, expiresIn: undefined }, /^policy expiresIn: give exactly one of expiresIn or expiresAt/],
    [{ ...valid, expiresAt: '2030-01-01T00:00:00Z' }, /^policy expiresIn: give exactly one/],
    [{ ...valid, expiresIn: '8 hours' }, /^policy expiresIn: must be a whole number with a unit/],
    [{ ...valid, resources: { write_file: ['fs:{path}'] } }, /^policy resources\["write_file"\]: names a tool that is not in tools/],
    [{ ...valid, resources: { read_file: ['fs:/base/{path}'] } }, /^policy resources\["read_file"\]\[0\]: fs: and url: templates are exactly/],
    [{ ...valid, resources: { read_file: ['{path}'] } }, /^policy resources\["read_file"\]\[0\]: must start with a scheme/],
    [{ ...valid, resources: { read_file: ['notes:/{a[]}/{b[]}'] } }, /at most one array argument/],
    [{ ...valid, args: { other: {} } }, /^policy args\["other"\]: names a tool that is not in tools/],
    [{ ...valid, fsBase: 'relative/dir' }, /^policy fsBase: must be an absolute directory path/],
    ['{ not json', /^policy \(policy\): is not JSON/],
  ])('refuses a malformed policy with a message naming the field (%#)', (policy, message) => {
    expect(problem(policy)).toMatch(message);
  });

  it('refuses a template that names an argument the tool does not declare', () => {
    const policy = parsePolicy(text({ ...valid, resources: { read_file: ['fs:{pth}'] } }));
    expect(() => checkPolicyTools(policy, new Map([['read_file', { type: 'object', properties: { path: { type: 'string' } } }]]))).toThrow(/resources\["read_file"\]\[0\]: names argument "pth", which read_file's inputSchema does not declare/);
  });

  it('refuses a tool that neither the upstream nor the log knows', () => {
    expect(() => checkPolicyTools(parsePolicy(text(valid)), new Map())).toThrow(/^policy tools\[0\]: "read_file" is not a tool/);
  });
});

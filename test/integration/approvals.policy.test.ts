import { diffPolicy } from '../../src/policy/policyDiff';
import { closeLedgers, hour, over100, paymentsLedger, pendingOf } from '../support/approvals';
import { checkPolicy, type PolicyTool } from '../../src/policy/checkPolicy';
import { parsePolicy, policyIssueOptions, PolicyError } from '../../src/integrations/mcp/policy';

describe('policies take approvals and approvalTimeoutMs', () => {
  const base = { tools: ['pay', 'balance'], expiresIn: '1h', budget: { calls: 5, inputBytes: 1_000 } };

  it('passes them to issue', () => {
    const policy = parsePolicy(JSON.stringify({ ...base, approvals: { pay: { properties: { amount: { exclusiveMinimum: 100 } } }, balance: true }, approvalTimeoutMs: 60_000 }));
    expect(policyIssueOptions(policy, 0)).toMatchObject({ approvals: { pay: { properties: { amount: { exclusiveMinimum: 100 } } }, balance: true }, approvalTimeoutMs: 60_000 });
  });

  it('refuses a rule on a tool the policy does not grant, naming the field', () => {
    expect(() => parsePolicy(JSON.stringify({ ...base, approvals: { delete: true } }))).toThrow(PolicyError);
    expect(() => parsePolicy(JSON.stringify({ ...base, approvals: { delete: true } }))).toThrow(/approvals\["delete"\]/);
  });

  it('refuses a rule that is neither true nor a schema, and a timeout that is not a positive integer', () => {
    expect(() => parsePolicy(JSON.stringify({ ...base, approvals: { pay: 'ask' } }))).toThrow(/approvals/);
    expect(() => parsePolicy(JSON.stringify({ ...base, approvalTimeoutMs: 0 }))).toThrow(/approvalTimeoutMs/);
  });
});

describe('atc policy check lints approvals', () => {
  const tools: PolicyTool[] = [{ name: 'pay', inputSchema: { type: 'object', properties: { to: { type: 'string' }, amount: { type: 'number' } } } }, { name: 'balance', inputSchema: { type: 'object' } }];
  const base = { tools: ['pay'], expiresIn: '1h', budget: { calls: 5, inputBytes: 1_000 } };
  const found = (policy: unknown) => checkPolicy(policy, tools, { now: 0 }).map((p) => `${p.code} ${p.pointer}`);

  it('approval_not_granted: a rule on a tool the policy does not grant, at its pointer', () => {
    expect(found({ ...base, approvals: { balance: true } })).toEqual(['approval_not_granted /approvals/balance']);
  });

  it('approval_invalid and undeclared_property: a rule that does not compile, or names a property the tool does not declare', () => {
    expect(found({ ...base, approvals: { pay: { properties: { amount: { frobnicate: 1 } } } } })).toEqual(['approval_invalid /approvals/pay']);
    expect(found({ ...base, approvals: { pay: { properties: { cents: { minimum: 1 } } } } })).toEqual(['undeclared_property /approvals/pay']);
  });

  it('stays quiet on good rules', () => {
    expect(found({ ...base, approvals: { pay: { properties: { amount: { exclusiveMinimum: 100 } } } }, approvalTimeoutMs: 60_000 })).toEqual([]);
  });
});

afterEach(closeLedgers);

describe('atc policy diff re-decides approvals', () => {
  async function loggedPayments() {
    const { ledger, clock } = await paymentsLedger();
    const { token } = await ledger.issue({ tools: ['pay'], expiresAt: clock.now() + hour, budget: { calls: 10, inputBytes: 10_000 }, approvals: { pay: over100 } });
    await ledger.invoke(token, 'pay', { to: 'bob', amount: 50 });
    const big = ledger.invoke(token, 'pay', { to: 'bob', amount: 150 });
    const [pending] = await pendingOf(ledger);
    await ledger.approve(pending!.approvalId, { by: 'alice' });
    await big;
    return ledger.events();
  }
  const candidate = (extra: object) => parsePolicy(JSON.stringify({ tools: ['pay'], expiresIn: '1h', budget: { calls: 10, inputBytes: 10_000 }, ...extra }));
  const summary = (diff: ReturnType<typeof diffPolicy>) => diff.changes.map((c) => `${c.before} → ${c.after}${c.assuming ? ` (${c.assuming.join(',')})` : ''}`);

  it('a `true` rule makes every logged call ask; no rule admits what asked', async () => {
    const events = await loggedPayments();
    expect(summary(diffPolicy(events, candidate({ approvals: { pay: true } })))).toEqual(['admitted → asked']);
    expect(summary(diffPolicy(events, candidate({})))).toEqual(['asked → admitted']);
  });

  it('the same schema decides as the log did; another one is open (argument values are never logged)', async () => {
    const events = await loggedPayments();
    expect(summary(diffPolicy(events, candidate({ approvals: { pay: over100 } })))).toEqual([]);
    const other = diffPolicy(events, candidate({ approvals: { pay: { properties: { amount: { minimum: 10 } } } } }));
    expect(summary(other)).toEqual(['asked → admitted (approvals)']);
    expect(other.open.approvals).toBe(2);
  });
});

import type { RejectReason } from '../../src';
import { admit, given, issueCommand, payloads, registerNotes, registerRead, T0 } from '../support/given';

describe('decide: admission', () => {
  it('admits a call inside every bound and reserves one call and its input bytes', () => {
    const [event] = payloads(given(registerNotes, issueCommand()).when(admit()));
    expect(event).toEqual({ type: 'call.admitted', callId: 'c1', grantId: 'g1', tool: 'notes.write', reserved: { calls: 1, inputBytes: 10 } });
  });

  // One row per reject reason the decider can reach; each row fails exactly one check.
  const rows: [RejectReason, () => ReturnType<ReturnType<typeof given>['when']>][] = [
    ['unknown_token', () => given(registerNotes, issueCommand()).when(admit({ grantId: undefined }))],
    ['revoked', () => given(registerNotes, issueCommand(), { type: 'revoke', at: T0, grantId: 'g1', abortInFlight: false }).when(admit())],
    ['not_yet_valid', () => given(registerNotes, issueCommand({ notBefore: T0 + 10 })).when(admit({ at: T0 + 9 }))],
    ['expired', () => given(registerNotes, issueCommand()).when(admit({ at: T0 + 60_000 }))],
    ['unknown_tool', () => given(registerNotes, issueCommand()).when(admit({ tool: 'notes.nope' }))],
    ['tool_not_granted', () => given(registerNotes, registerRead, issueCommand()).when(admit({ tool: 'notes.read' }))],
    ['invalid_arguments', () => given(registerNotes, issueCommand()).when(admit({ argumentCheck: 'invalid_arguments' }))],
    ['invalid_arguments', () => given(registerNotes, issueCommand()).when(admit({ inputBytes: undefined }))],
    ['argument_not_permitted', () => given(registerNotes, issueCommand()).when(admit({ argumentCheck: 'argument_not_permitted' }))],
    ['invalid_resource', () => given(registerNotes, issueCommand()).when(admit({ resourceCheck: 'invalid_resource' }))],
    ['resource_not_permitted', () => given(registerNotes, issueCommand()).when(admit({ resourceCheck: 'resource_not_permitted' }))],
    ['call_budget_exhausted', () => given(registerNotes, issueCommand({ budget: { calls: 1, inputBytes: 100 } }), admit({ callId: 'c0' })).when(admit())],
    ['byte_budget_exhausted', () => given(registerNotes, issueCommand()).when(admit({ inputBytes: 101 }))],
  ];
  it.each(rows)('rejects %s', (reason, run) => {
    const [event] = payloads(run());
    expect(event).toMatchObject({ type: 'call.rejected', callId: 'c1', reason });
  });

  it('applies the documented precedence: the first failing check decides', () => {
    // Revoked and expired and out of budget and bad arguments: revoked wins.
    const g = given(registerNotes, issueCommand({ budget: { calls: 0, inputBytes: 0 } }), { type: 'revoke', at: T0, grantId: 'g1', abortInFlight: false });
    const [event] = payloads(g.when(admit({ at: T0 + 90_000, argumentCheck: 'invalid_arguments', resourceCheck: 'invalid_resource' })));
    expect(event).toMatchObject({ reason: 'revoked' });
    const [second] = payloads(given(registerNotes, issueCommand({ budget: { calls: 0, inputBytes: 0 } })).when(admit({ argumentCheck: 'argument_not_permitted', resourceCheck: 'invalid_resource' })));
    expect(second).toMatchObject({ reason: 'argument_not_permitted' });
  });

  it('admits a call that uses the byte budget exactly, and rejects the next byte', () => {
    const g = given(registerNotes, issueCommand({ budget: { calls: 5, inputBytes: 20 } }), admit({ callId: 'c0', inputBytes: 10 }));
    expect(payloads(g.when(admit({ inputBytes: 10 })))[0]).toMatchObject({ type: 'call.admitted' });
    expect(payloads(g.when(admit({ inputBytes: 11 })))[0]).toMatchObject({ reason: 'byte_budget_exhausted' });
  });

  it('treats notBefore as inclusive and expiresAt as exclusive', () => {
    const g = given(registerNotes, issueCommand({ notBefore: T0 + 10, expiresAt: T0 + 20 }));
    expect(payloads(g.when(admit({ at: T0 + 10 })))[0]).toMatchObject({ type: 'call.admitted' });
    expect(payloads(g.when(admit({ at: T0 + 19 })))[0]).toMatchObject({ type: 'call.admitted' });
    expect(payloads(g.when(admit({ at: T0 + 20 })))[0]).toMatchObject({ reason: 'expired' });
  });

  it('omits grantId from an unknown-token rejection and never logs a token', () => {
    const [event] = payloads(given(registerNotes).when(admit({ grantId: undefined })));
    expect(event).not.toHaveProperty('grantId');
    expect(Object.keys(event as object)).not.toContain('token');
  });
});

describe('decide: settle', () => {
  const admitted = () => given(registerNotes, issueCommand(), admit());

  it('completes an in-flight call', () => {
    expect(payloads(admitted().when({ type: 'settle', at: T0 + 2, callId: 'c1', outcome: 'completed', refund: false }))).toEqual([
      { type: 'call.completed', callId: 'c1', grantId: 'g1', tool: 'notes.write' },
    ]);
  });

  it('records a refund of the whole reservation when the host refunds failures', () => {
    expect(payloads(admitted().when({ type: 'settle', at: T0 + 2, callId: 'c1', outcome: 'failed', refund: true }))[0]).toMatchObject({ refunded: { calls: 1, inputBytes: 10 } });
  });

  it('records no refund when failures consume budget', () => {
    expect(payloads(admitted().when({ type: 'settle', at: T0 + 2, callId: 'c1', outcome: 'failed', refund: false }))[0]).toMatchObject({ refunded: { calls: 0, inputBytes: 0 } });
  });

  it('refuses to settle a call that is not in flight', () => {
    expect(given(registerNotes).when({ type: 'settle', at: T0, callId: 'nope', outcome: 'completed', refund: false })).toMatchObject({ ok: false, code: 'unknown_call' });
  });
});

describe('decide: host commands', () => {
  it('re-registering a tool with the same schema appends nothing', () => {
    expect(payloads(given(registerNotes).when(registerNotes))).toEqual([]);
  });

  it('refuses a changed schema under an existing name', () => {
    const changed = { ...registerNotes, inputSchema: { type: 'object', properties: {} } } as typeof registerNotes;
    expect(given(registerNotes).when(changed)).toMatchObject({ ok: false, code: 'tool_conflict' });
  });

  it.each([
    ['an unregistered tool', { tools: ['notes.delete'] }, /not registered/],
    ['a negative budget', { budget: { calls: -1, inputBytes: 1 } }, /budget.calls/],
    ['a fractional budget', { budget: { calls: 1, inputBytes: 1.5 } }, /budget.inputBytes/],
    ['expiry not after notBefore', { notBefore: T0, expiresAt: T0 }, /after notBefore/],
    ['a non-canonical scope', { resources: ['notes:/drafts/../'] }, /canonical scope/],
    ['a narrowing schema for an ungranted tool', { args: { 'notes.read': {} } }, /does not include/],
  ])('refuses to issue a grant with %s', (_label, scope, message) => {
    const decision = given(registerNotes).when(issueCommand(scope as never));
    expect(decision).toMatchObject({ ok: false, code: 'invalid_grant' });
    expect(decision.ok ? '' : decision.message).toMatch(message);
  });

  it('revoking twice appends one event', () => {
    const g = given(registerNotes, issueCommand(), { type: 'revoke', at: T0, grantId: 'g1', abortInFlight: false });
    expect(payloads(g.when({ type: 'revoke', at: T0, grantId: 'g1', abortInFlight: true }))).toEqual([]);
  });

  it('refuses to revoke an unknown grant', () => {
    expect(given().when({ type: 'revoke', at: T0, grantId: 'nope', abortInFlight: false })).toMatchObject({ ok: false, code: 'unknown_grant' });
  });
});

import type { Command } from '../../src';
import { toolNamePattern } from '../../src/domain/limits';
import { admit, given, issueCommand, payloads, registerNotes, T0 } from '../support/given';

// The decider's host-command rules and the exact events it emits, one rule per test.

const register = (tool: string, inputSchema: unknown): Command => ({ type: 'registerTool', at: T0, tool, inputSchema: inputSchema as never });

describe('decide: registerTool', () => {
  it.each([['the empty name', ''], ['a name with a space', 'notes write'], ['a name with a slash', 'notes/write'], ['a name of 129 characters', 'a'.repeat(129)]])('refuses %s as invalid_tool', (_rule, tool) => {
    expect(given().when(register(tool, { type: 'object' }))).toEqual({ ok: false, code: 'invalid_tool', message: `tool name must match ${toolNamePattern}` });
  });

  it.each([['a number', 5], ['an object whose text is a valid name', { toString: () => 'notes.write' }], ['null', null]])('refuses a tool name that is %s as invalid_tool, not registering its text', (_rule, tool) => {
    expect(given().when(register(tool as unknown as string, { type: 'object' }))).toEqual({ ok: false, code: 'invalid_tool', message: `tool name must match ${toolNamePattern}` });
  });

  it('accepts a name of 128 characters, upper and lower case', () => {
    expect(given().when(register(`A${'b'.repeat(127)}`, { type: 'object' })).ok).toBe(true);
  });

  it.each([['null', null], ['an array', []], ['a string', 'object']])('refuses an inputSchema that is %s', (_rule, schema) => {
    expect(given().when(register('notes.write', schema))).toEqual({ ok: false, code: 'invalid_tool', message: 'inputSchema must be a JSON Schema object' });
  });

  it('emits tool.registered with the name and the schema', () => {
    expect(payloads(given().when(register('notes.write', { type: 'object' })))).toEqual([{ type: 'tool.registered', tool: 'notes.write', inputSchema: { type: 'object' } }]);
  });

  it('treats an inherited member name as a new tool, not as registered', () => {
    expect(payloads(given().when(register('constructor', { type: 'object' })))).toEqual([{ type: 'tool.registered', tool: 'constructor', inputSchema: { type: 'object' } }]);
  });

  it('takes a re-registration with the same schema in another key order as the same', () => {
    const reordered = register('notes.write', { required: ['path', 'text'], properties: { text: { type: 'string' }, path: { type: 'string' } }, type: 'object' });
    expect(payloads(given(registerNotes).when(reordered))).toEqual([]);
  });

  it('names the tool in a tool_conflict refusal', () => {
    expect(given(registerNotes).when(register('notes.write', { type: 'object' }))).toEqual({
      ok: false,
      code: 'tool_conflict',
      message: 'tool notes.write is already registered with a different inputSchema; register the changed tool under a new name',
    });
  });
});

describe('decide: issue', () => {
  it('emits grant.issued with the id, the token digest and the scope as given', () => {
    const command = issueCommand() as Extract<Command, { type: 'issue' }>;
    expect(payloads(given(registerNotes).when(command))).toEqual([{ type: 'grant.issued', grantId: 'g1', tokenDigest: command.tokenDigest, scope: command.scope }]);
  });

  it('refuses a grant id already issued, before looking at the scope', () => {
    const again = { ...(issueCommand({ tools: [] }) as Extract<Command, { type: 'issue' }>), tokenDigest: 'c'.repeat(64) };
    expect(given(registerNotes, issueCommand()).when(again)).toEqual({ ok: false, code: 'duplicate_grant', message: 'grant id already issued' });
  });

  it('refuses a token digest already issued under another grant id', () => {
    const again = { ...(issueCommand() as Extract<Command, { type: 'issue' }>), grantId: 'g2' };
    expect(given(registerNotes, issueCommand()).when(again)).toEqual({ ok: false, code: 'duplicate_grant', message: 'token digest already issued' });
  });
});

describe('decide: revoke and settle events', () => {
  it('emits grant.revoked with abortInFlight as asked', () => {
    for (const abortInFlight of [true, false]) {
      expect(payloads(given(registerNotes, issueCommand()).when({ type: 'revoke', at: T0, grantId: 'g1', abortInFlight }))).toEqual([{ type: 'grant.revoked', grantId: 'g1', abortInFlight }]);
    }
  });

  it('emits call.failed with the call, its grant and tool, and a whole refund when asked', () => {
    const g = given(registerNotes, issueCommand(), admit());
    expect(payloads(g.when({ type: 'settle', at: T0 + 2, callId: 'c1', outcome: 'failed', refund: true }))).toEqual([
      { type: 'call.failed', callId: 'c1', grantId: 'g1', tool: 'notes.write', refunded: { calls: 1, inputBytes: 10 } },
    ]);
  });

  it('refuses to settle a call a second time', () => {
    const g = given(registerNotes, issueCommand(), admit(), { type: 'settle', at: T0 + 2, callId: 'c1', outcome: 'completed', refund: false });
    expect(g.when({ type: 'settle', at: T0 + 3, callId: 'c1', outcome: 'failed', refund: true })).toEqual({ ok: false, code: 'unknown_call', message: 'no call in flight has that id' });
  });
});

describe('decide: rejection payloads', () => {
  it('carries the grant, the tool, the reason and the input bytes of a rejected call', () => {
    expect(payloads(given(registerNotes, issueCommand()).when(admit({ resourceCheck: 'resource_not_permitted' })))).toEqual([
      { type: 'call.rejected', callId: 'c1', grantId: 'g1', tool: 'notes.write', reason: 'resource_not_permitted', inputBytes: 10 },
    ]);
  });

  it('omits inputBytes when the arguments had no canonical size', () => {
    expect(payloads(given(registerNotes, issueCommand()).when(admit({ inputBytes: undefined })))).toEqual([
      { type: 'call.rejected', callId: 'c1', grantId: 'g1', tool: 'notes.write', reason: 'invalid_arguments' },
    ]);
  });

  it('admits with the byte budget exact for the first call and the call budget exact for the last', () => {
    const g = given(registerNotes, issueCommand({ budget: { calls: 2, inputBytes: 20 } }), admit({ callId: 'c0', inputBytes: 10 }));
    expect(payloads(g.when(admit({ inputBytes: 10 })))).toEqual([{ type: 'call.admitted', callId: 'c1', grantId: 'g1', tool: 'notes.write', reserved: { calls: 1, inputBytes: 10 } }]);
  });
});

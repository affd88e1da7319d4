import { createLedger, verify, type Ledger } from '../../src';
import { LedgerRejectionError, ledgerTools } from '../../src/integrations/ai-sdk';
import { notesLedger } from '../support/fixtures';

// Regression (issue 32, item 5): a rejected call's message was one fixed sentence per reason ("the
// arguments do not satisfy the tool's input schema or are not plain JSON, or the idempotency key
// is …"), so an agent could not tell what to fix. It now names the keyword and the location from the
// schema's own words; it never holds an argument value nor a key the schema does not declare, and
// it is the outcome's only: the log keeps the reason alone.

const T0 = 1_700_000_000_000;
const secret = 'hunter2-SECRET-VALUE';

async function notes(): Promise<{ ledger: Ledger; token: string }> {
  const { ledger } = await notesLedger({ clock: () => T0 });
  const { token } = await ledger.issue({
    tools: ['notes.write'],
    args: { 'notes.write': { properties: { text: { maxLength: 200 } } } },
    resources: ['notes:/drafts/'],
    expiresAt: T0 + 60_000,
    budget: { calls: 50, inputBytes: 100_000 },
  });
  return { ledger, token };
}

const messageOf = (outcome: unknown): string => (outcome as { message: string }).message;

describe('regression: rejection messages an agent can act on', () => {
  it('names the narrowing keyword, its limit and the location: /text: maxLength 200', async () => {
    const { ledger, token } = await notes();
    const outcome = await ledger.invoke(token, 'notes.write', { path: 'drafts/a', text: secret.repeat(20) });
    expect(outcome).toMatchObject({ status: 'rejected', reason: 'argument_not_permitted' });
    expect(messageOf(outcome)).toBe("the arguments fall outside the grant's narrowing schema: /text: maxLength 200");
    await ledger.close();
  });

  it('names a missing required property of the tool schema: /: required "text"', async () => {
    const { ledger, token } = await notes();
    const outcome = await ledger.invoke(token, 'notes.write', { path: 'drafts/a' });
    expect(outcome).toMatchObject({ status: 'rejected', reason: 'invalid_arguments' });
    expect(messageOf(outcome)).toBe('the arguments do not satisfy the tool\'s input schema: /: required "text"');
    await ledger.close();
  });

  it('names the expected type at the location: /path: type string, without the value sent', async () => {
    const { ledger, token } = await notes();
    const outcome = await ledger.invoke(token, 'notes.write', { path: { secret }, text: 'x' });
    expect(messageOf(outcome)).toBe("the arguments do not satisfy the tool's input schema: /path: type string");
    await ledger.close();
  });

  it('reports an undeclared key as additionalProperties at its parent, without its name', async () => {
    const { ledger, token } = await notes();
    const outcome = await ledger.invoke(token, 'notes.write', { path: 'drafts/a', text: 'x', [secret]: 1 });
    expect(outcome).toMatchObject({ status: 'rejected', reason: 'invalid_arguments' });
    expect(messageOf(outcome)).toBe("the arguments do not satisfy the tool's input schema: /: additionalProperties");
    await ledger.close();
  });

  it('writes * for a location segment that is a key the schema does not name (open maps), and keeps array indexes', async () => {
    const ledger = createLedger({ clock: () => T0 });
    await ledger.registerTool({
      name: 'tag',
      inputSchema: { type: 'object', properties: { labels: { type: 'object', additionalProperties: { type: 'string' } }, list: { type: 'array', items: { type: 'integer', maximum: 9 } } } },
      run: () => 1,
    });
    const { token } = await ledger.issue({ tools: ['tag'], expiresAt: T0 + 60_000, budget: { calls: 10, inputBytes: 10_000 } });
    expect(messageOf(await ledger.invoke(token, 'tag', { labels: { [secret]: 5 } }))).toBe("the arguments do not satisfy the tool's input schema: /labels/*: type string");
    expect(messageOf(await ledger.invoke(token, 'tag', { list: [1, 2, 10] }))).toBe("the arguments do not satisfy the tool's input schema: /list/2: maximum <= 9");
    await ledger.close();
  });

  it('says which rule a malformed call breaks: not plain JSON, a bad idempotency key', async () => {
    const { ledger, token } = await notes();
    expect(messageOf(await ledger.invoke(token, 'notes.write', { path: 'drafts/a', text: 'x', n: Number.NaN }))).toMatch(/^the arguments are not a plain JSON object of at most 1048576 canonical bytes and 64 levels$/);
    expect(messageOf(await ledger.invoke(token, 'notes.write', { path: 'drafts/a', text: 'x' }, { idempotencyKey: '' }))).toBe('the idempotency key is not a string of 1-255 characters');
    await ledger.close();
  });

  it('keeps messages out of the log: events hold the reason only, no value, and the log verifies', async () => {
    const { ledger, token } = await notes();
    await ledger.invoke(token, 'notes.write', { path: 'drafts/a', text: secret.repeat(20) });
    await ledger.invoke(token, 'notes.write', { path: 'drafts/a', text: 'x', [secret]: 1 });
    const log = JSON.stringify(ledger.events());
    expect(log).not.toContain(secret);
    expect(log).not.toContain('maxLength 200');
    expect(ledger.events().filter((e) => e.type === 'call.rejected').map((e) => Object.keys(e).sort())).toEqual([
      ['at', 'callId', 'grantId', 'hash', 'inputBytes', 'prevHash', 'reason', 'seq', 'tool', 'type'],
      ['at', 'callId', 'grantId', 'hash', 'inputBytes', 'prevHash', 'reason', 'seq', 'tool', 'type'],
    ]);
    expect(verify(ledger.events()).ok).toBe(true);
    await ledger.close();
  });

  it('reaches an AI SDK model as the tool error: rejected: <reason>: <what failed>', async () => {
    const { ledger, token } = await notes();
    const tools = ledgerTools(ledger, token);
    const execute = tools['notes.write']?.execute as (input: unknown, options: unknown) => Promise<unknown>;
    const error = await execute({ path: 'drafts/a', text: 'y'.repeat(201) }, { toolCallId: 't1', messages: [] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LedgerRejectionError);
    expect((error as Error).message).toBe("rejected: argument_not_permitted: the arguments fall outside the grant's narrowing schema: /text: maxLength 200");
    await ledger.close();
  });
});

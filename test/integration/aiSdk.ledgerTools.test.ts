import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { createLedger, type Ledger } from '../../src';
import { LedgerRejectionError, ledgerTools } from '../../src/integrations/ai-sdk';

const hour = 3_600_000;
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };

/** A model that asks for these tool calls first, then answers in text. */
function scriptedModel(calls: { toolName: string; input: object }[]): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doGenerate: [
      {
        content: calls.map((c, i) => ({ type: 'tool-call' as const, toolCallId: `call-${i}`, toolName: c.toolName, input: JSON.stringify(c.input) })),
        finishReason: { unified: 'tool-calls', raw: undefined },
        usage,
        warnings: [],
      },
      { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] },
    ],
  });
}

async function notesLedger(): Promise<{ ledger: Ledger; written: string[]; token: string }> {
  const ledger = createLedger();
  const written: string[] = [];
  await ledger.registerTool<{ path: string; text: string }>({
    name: 'notes_write',
    inputSchema: { type: 'object', properties: { path: { type: 'string' }, text: { type: 'string' } }, required: ['path', 'text'] },
    resources: (args) => [`notes:/${args.path}`],
    run: (args) => {
      written.push(args.path);
      return { ok: true };
    },
  });
  await ledger.registerTool({ name: 'notes_delete', inputSchema: { type: 'object', properties: {} }, run: () => 'deleted' });
  const { token } = await ledger.issue({ tools: ['notes_write'], resources: ['notes:/drafts/'], expiresAt: Date.now() + hour, budget: { calls: 5, inputBytes: 10_000 } });
  return { ledger, written, token };
}

describe('ledgerTools for the Vercel AI SDK', () => {
  it('offers only the tools the token may call', async () => {
    const { ledger, token } = await notesLedger();
    expect(Object.keys(ledgerTools(ledger, token))).toEqual(['notes_write']);
    expect(ledgerTools(ledger, 'atc_not-a-token')).toEqual({});
  });

  it('runs an allowed call and shows the model a rejection as a tool error with its reason', async () => {
    const { ledger, written, token } = await notesLedger();
    const model = scriptedModel([
      { toolName: 'notes_write', input: { path: 'drafts/a', text: 'hi' } },
      { toolName: 'notes_write', input: { path: 'private/b', text: 'leak' } },
    ]);
    const result = await generateText({ model, prompt: 'take notes', tools: ledgerTools(ledger, token, { descriptions: { notes_write: 'write a note' } }), stopWhen: stepCountIs(3) });
    expect(result.text).toBe('done');
    expect(written).toEqual(['drafts/a']);
    const parts = result.steps[0]?.content ?? [];
    expect(parts.filter((p) => p.type === 'tool-result')).toEqual([expect.objectContaining({ toolCallId: 'call-0', output: { ok: true } })]);
    const errors = parts.filter((p) => p.type === 'tool-error');
    expect(errors).toHaveLength(1);
    expect((errors[0] as { error: unknown }).error).toBeInstanceOf(LedgerRejectionError);
    expect((errors[0] as { error: LedgerRejectionError }).error.reason).toBe('resource_not_permitted');
    // The model's next step sees the reason in the tool result it is given.
    expect(JSON.stringify(model.doGenerateCalls[1]?.prompt)).toContain('rejected: resource_not_permitted');
    expect(JSON.stringify(model.doGenerateCalls[0]?.tools)).toContain('write a note');
  });

  it('never runs a tool the token may not call, even when the model names it', async () => {
    const { ledger, token } = await notesLedger();
    const model = scriptedModel([{ toolName: 'notes_delete', input: {} }]);
    const result = await generateText({ model, prompt: 'clean up', tools: ledgerTools(ledger, token), stopWhen: stepCountIs(3) });
    expect(result.steps[0]?.content.some((p) => p.type === 'tool-error')).toBe(true);
    expect(ledger.events().some((e) => e.type === 'call.admitted')).toBe(false);
  });

  it('lists nothing after the grant is revoked', async () => {
    const ledger = createLedger();
    await ledger.registerTool({ name: 'ping', inputSchema: { type: 'object', properties: {} }, run: () => 'pong' });
    const { token, grantId } = await ledger.issue({ tools: ['ping'], expiresAt: Date.now() + hour, budget: { calls: 1, inputBytes: 100 } });
    await ledger.revoke(grantId);
    expect(ledgerTools(ledger, token)).toEqual({});
  });
});

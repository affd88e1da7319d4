// An AI SDK agent loop whose model sees only the tools its grant allows; every call goes through the ledger.
import { generateText, stepCountIs } from 'ai';
import { createLedger } from 'agent-tool-capabilities';
import { ledgerTools } from 'agent-tool-capabilities/ai-sdk';

export async function runAgent({ model, prompt }) {
  const ledger = createLedger();
  const notes = new Map();
  const note = { type: 'object', properties: { path: { type: 'string' }, text: { type: 'string' } }, required: ['path', 'text'] };
  await ledger.registerTool({ name: 'notes_write', inputSchema: note, resources: (a) => [`notes:/${a.path}`], run: (a) => (notes.set(a.path, a.text), 'saved') });
  await ledger.registerTool({ name: 'notes_delete_all', inputSchema: { type: 'object', properties: {} }, run: () => notes.clear() });
  // The host's grant: write under drafts/ only, ten calls, ten minutes. The model holds nothing else.
  const { token } = await ledger.issue({
    tools: ['notes_write'],
    resources: ['notes:/drafts/'],
    expiresAt: Date.now() + 10 * 60_000,
    budget: { calls: 10, inputBytes: 10_000 },
  });
  const result = await generateText({ model, prompt, tools: ledgerTools(ledger, token), stopWhen: stepCountIs(5) });
  const decisions = ledger.events()
    .filter((e) => e.type === 'call.admitted' || e.type === 'call.rejected')
    .map((e) => `${e.tool}: ${e.type === 'call.rejected' ? e.reason : 'admitted'}`);
  await ledger.close();
  return { text: result.text, notes: Object.fromEntries(notes), decisions };
}

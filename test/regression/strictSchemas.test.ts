import { createLedger, memoryStore, sha256Hex } from '../../src';
import { given, registerNotes, T0 } from '../support/given';
import { manualClock, noteSchema, notesLedger } from '../support/fixtures';

// Regression (issue 10, defect 8): schemas were compiled with `strict: false`, so a narrowing schema
// with a typo (`maxLenght`) or an unknown `format` compiled and restricted nothing. Schemas are now
// compiled with ajv's strictSchema and refused with the keyword named; the tool-name rule is MCP's.

const hour = 3_600_000;

describe('regression: schemas that restrict nothing', () => {
  it('refuses a narrowing schema with an unknown keyword at issue, naming it', async () => {
    const { ledger } = await notesLedger();
    await expect(
      ledger.issue({ tools: ['notes.write'], args: { 'notes.write': { properties: { text: { maxLenght: 200 } } } }, expiresAt: Date.now() + hour, budget: { calls: 1, inputBytes: 100 } }),
    ).rejects.toThrow(/maxLenght/);
    expect(ledger.events().filter((e) => e.type === 'grant.issued')).toHaveLength(0);
  });

  it('refuses a narrowing schema with an unknown format at issue, naming it', async () => {
    const { ledger } = await notesLedger();
    await expect(
      ledger.issue({ tools: ['notes.write'], args: { 'notes.write': { properties: { path: { type: 'string', format: 'safe-path' } } } }, expiresAt: Date.now() + hour, budget: { calls: 1, inputBytes: 100 } }),
    ).rejects.toThrow(/format "safe-path"/);
  });

  it('refuses an input schema with an unknown keyword at registerTool, naming it', async () => {
    const ledger = createLedger();
    await expect(ledger.registerTool({ name: 'notes.write', inputSchema: { type: 'object', properties: { path: { type: 'string', pattren: '^drafts/' } } }, run: () => 1 })).rejects.toThrow(/pattren/);
    expect(ledger.events()).toHaveLength(0);
  });

  it('keeps a narrowing schema without `type` valid (strictTypes is not required)', async () => {
    const { ledger } = await notesLedger();
    const { token } = await ledger.issue({ tools: ['notes.write'], args: { 'notes.write': { properties: { text: { maxLength: 3 } } } }, resources: ['notes:/drafts/'], expiresAt: Date.now() + hour, budget: { calls: 5, inputBytes: 1_000 } });
    expect(await ledger.invoke(token, 'notes.write', { path: 'drafts/a', text: 'abcd' })).toMatchObject({ status: 'rejected', reason: 'argument_not_permitted' });
    expect(await ledger.invoke(token, 'notes.write', { path: 'drafts/a', text: 'abc' })).toMatchObject({ status: 'completed' });
  });

  it('refuses a call (argument_not_permitted) under a stored grant whose narrowing no longer compiles, and only that call', async () => {
    const token = 'atc_stored-before-strict-schemas';
    const { events } = given(registerNotes, {
      type: 'issue',
      at: T0,
      grantId: 'g_old',
      tokenDigest: sha256Hex(token),
      scope: { tools: ['notes.write'], args: { 'notes.write': { properties: { text: { maxLenght: 1 } } } }, resources: ['notes:/drafts/'], notBefore: T0, expiresAt: T0 + hour, budget: { calls: 5, inputBytes: 1_000 } },
    });
    const clock = manualClock(T0 + 1);
    const ledger = createLedger({ store: memoryStore(events), clock: clock.now });
    await ledger.registerTool({ name: 'notes.write', inputSchema: registerNotes.type === 'registerTool' ? registerNotes.inputSchema : noteSchema, run: () => 'ran' });
    const { token: fresh } = await ledger.issue({ tools: ['notes.write'], resources: ['notes:/drafts/'], expiresAt: T0 + hour, budget: { calls: 5, inputBytes: 1_000 } });
    const [old, ok] = await Promise.all([
      ledger.invoke(token, 'notes.write', { path: 'drafts/a', text: 'hi' }),
      ledger.invoke(fresh, 'notes.write', { path: 'drafts/a', text: 'hi' }),
    ]);
    expect(old).toMatchObject({ status: 'rejected', reason: 'argument_not_permitted' });
    expect(ok).toMatchObject({ status: 'completed' });
  });
});

describe('tool names follow MCP: /^[A-Za-z0-9_.-]{1,128}$/', () => {
  it.each(['Notes_Write', 'readFile', '1password', '_', 'a'.repeat(128), 'mcp.server-Tool_2'])('registers and calls %s', async (name) => {
    const ledger = createLedger();
    await ledger.registerTool({ name, inputSchema: { type: 'object' }, run: () => name });
    const { token } = await ledger.issue({ tools: [name], expiresAt: Date.now() + hour, budget: { calls: 1, inputBytes: 100 } });
    expect(await ledger.invoke(token, name, {})).toMatchObject({ status: 'completed', value: name });
  });

  it.each(['', 'a'.repeat(129), 'read file', 'notes/write', 'tool:1', 'é', '(invalid-name)'])('refuses %j at registerTool and logs a call naming it as (invalid-name)', async (name) => {
    const ledger = createLedger();
    await expect(ledger.registerTool({ name, inputSchema: { type: 'object' }, run: () => 1 })).rejects.toThrow(/must match/);
    await ledger.registerTool({ name: 'ok', inputSchema: { type: 'object' }, run: () => 1 });
    const { token } = await ledger.issue({ tools: ['ok'], expiresAt: Date.now() + hour, budget: { calls: 1, inputBytes: 100 } });
    expect(await ledger.invoke(token, name, {})).toMatchObject({ status: 'rejected', reason: 'unknown_tool' });
    expect(ledger.events().at(-1)).toMatchObject({ type: 'call.rejected', tool: '(invalid-name)' });
  });
});

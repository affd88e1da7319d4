import { createLedger, limits, verify, type JsonObject, type JsonValue, type Ledger } from '../../src';
import { backtrackSafe } from '../../src/tools/linearRegExp';
import { SchemaCompiler } from '../../src/tools/schemas';

// Regression (issue 30, defect 3): keywords whose cost grew faster than the input ran inside the
// serialized admission step. `uniqueItems` compared every pair of items (one 150 KB call froze every
// grant for seconds), `pattern` ran on a backtracking engine, `$ref` could unfold exponentially or
// recurse, some formats cost far more than a byte per character, and an agent's narrowing applied to
// every item multiplied two agent inputs. Each is now bounded; these tests count work, never time.

const hour = 3_600_000;
const T0 = 1_700_000_000_000;

async function ledgerWith(inputSchema: JsonObject): Promise<{ ledger: Ledger; token: string; grantId: string }> {
  const ledger = createLedger({ clock: () => T0 });
  await ledger.registerTool({ name: 'bulk', inputSchema, run: () => 'ran' });
  const { token, grantId } = await ledger.issue({ tools: ['bulk'], expiresAt: T0 + hour, budget: { calls: 100, inputBytes: 10_000_000 } });
  return { ledger, token, grantId };
}

/** How many times Object.keys ran during `run`: ajv's pairwise deep equality calls it twice per compared pair. */
async function objectKeysCalls(run: () => Promise<unknown>): Promise<number> {
  const spy = jest.spyOn(Object, 'keys');
  try {
    await run();
    return spy.mock.calls.length;
  } finally {
    spy.mockRestore();
  }
}

describe('regression: uniqueItems is checked in linear work', () => {
  const n = 2_000;
  const distinct = Array.from({ length: n }, (_, i) => ({ id: i, tag: 'x' }));

  it('decides a call of 2,000 distinct objects with Object.keys run a few times per item, not per pair', async () => {
    const { ledger, token } = await ledgerWith({ type: 'object', properties: { items: { type: 'array', uniqueItems: true } } });
    let outcome: unknown;
    const calls = await objectKeysCalls(async () => (outcome = await ledger.invoke(token, 'bulk', { items: distinct })));
    expect(outcome).toMatchObject({ status: 'completed' });
    // Pairwise: about n²/2 comparisons, each reading both objects' keys (≈ 4,000,000 calls).
    expect(calls).toBeLessThan(10 * n);
    await ledger.close();
  });

  it('still refuses equal items, whatever their member order, naming the keyword and location', async () => {
    const { ledger, token } = await ledgerWith({ type: 'object', properties: { items: { type: 'array', uniqueItems: true } } });
    const outcome = await ledger.invoke(token, 'bulk', { items: [...distinct, { tag: 'x', id: 7 }] });
    expect(outcome).toMatchObject({ status: 'rejected', reason: 'invalid_arguments' });
    expect((outcome as { message: string }).message).toContain('/items: uniqueItems');
    await ledger.close();
  });

  it('treats scalars by JSON value: 1 and 1.0 are equal, "1" and 1 are not, 0 and -0 are equal', () => {
    const validate = new SchemaCompiler().compileNarrowing({ uniqueItems: true });
    expect(validate([1, '1', true, null, [1], { a: 1 }] as never)).toBe(true);
    expect(validate([0, -0] as never)).toBe(false);
    expect(validate([[1, { a: 1, b: 2 }], [1, { b: 2, a: 1 }]] as never)).toBe(false);
  });
});

describe('regression: patterns run on a linear-time engine', () => {
  it('refuses at registerTool a pattern only a backtracking engine runs (a backreference), naming the engine', async () => {
    const ledger = createLedger();
    await expect(ledger.registerTool({ name: 'bulk', inputSchema: { type: 'object', properties: { s: { type: 'string', pattern: '^(a)\\1$' } } }, run: () => 1 })).rejects.toThrow(/linear-time engine/);
  });

  it('decides a call against ^(a+)+$ on 20,000 characters (2^20000 backtracking steps) and says which keyword failed', async () => {
    const { ledger, token } = await ledgerWith({ type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } });
    const outcome = await ledger.invoke(token, 'bulk', { s: 'a'.repeat(20_000) + '!' });
    expect(outcome).toMatchObject({ status: 'rejected', reason: 'invalid_arguments' });
    expect((outcome as { message: string }).message).toMatch(/\/s: pattern$/);
    expect(await ledger.invoke(token, 'bulk', { s: 'a'.repeat(20_000) })).toMatchObject({ status: 'completed' });
    await ledger.close();
  });
});

describe('regression: $ref cannot unfold or recurse without bound', () => {
  it('refuses a recursive $ref, whose shared sub-schema could run 2^depth times on one value', () => {
    const schema = { $defs: { n: { allOf: [{ items: { $ref: '#/$defs/n' } }, { items: { $ref: '#/$defs/n' } }] } }, properties: { a: { $ref: '#/$defs/n' } } };
    expect(() => new SchemaCompiler().compileToolSchema({ type: 'object', ...schema })).toThrow(/\$ref "#\/\$defs\/n" is recursive/);
  });

  it(`refuses a schema that unfolds to more than schemaNodesMax (${limits.schemaNodesMax}) JSON values`, () => {
    // 20 levels each referring twice to the next: small as written, 2^20 nodes unfolded.
    const defs: { [name: string]: JsonValue } = { l20: { type: 'number' } };
    for (let i = 19; i >= 0; i--) defs[`l${i}`] = { allOf: [{ $ref: `#/$defs/l${i + 1}` }, { $ref: `#/$defs/l${i + 1}` }] };
    expect(() => new SchemaCompiler().compileToolSchema({ type: 'object', $defs: defs, properties: { a: { $ref: '#/$defs/l0' } } })).toThrow(/over the bound of 100000/);
  });

  it('accepts a local, shared, non-recursive $ref (the MCP conformance tool uses one)', () => {
    const validate = new SchemaCompiler().compileToolSchema({ type: 'object', $defs: { s: { type: 'string', maxLength: 2 } }, properties: { a: { $ref: '#/$defs/s' }, b: { $ref: '#/$defs/s' } } });
    expect(validate({ a: 'ab', b: 'c' })).toBe(true);
    expect(validate({ a: 'abc' })).toBe(false);
  });

  it('refuses a remote $ref and the keywords this walk cannot resolve as ajv does', () => {
    const compiler = new SchemaCompiler();
    expect(() => compiler.compileToolSchema({ type: 'object', properties: { a: { $ref: 'https://example.com/s.json' } } })).toThrow(/not a local JSON Pointer/);
    expect(() => compiler.compileToolSchema({ type: 'object', properties: { a: { $dynamicRef: '#x' } } })).toThrow(/\$dynamicRef/);
    expect(() => compiler.compileToolSchema({ type: 'object', properties: { a: { $id: 'x', type: 'string' } } })).toThrow(/\$id is only read at the root/);
  });

  it(`refuses a schema nested deeper than schemaNestingMax (${limits.schemaNestingMax})`, () => {
    let deep: JsonObject = { type: 'string' };
    for (let i = 0; i < limits.schemaNestingMax + 1; i++) deep = { not: deep };
    expect(() => new SchemaCompiler().compileNarrowing(deep)).toThrow(/nests deeper than 64/);
  });
});

describe('regression: formats short by nature read at most formatCharsMax characters', () => {
  it(`fails a regex-format string over ${limits.formatCharsMax} characters without compiling it`, () => {
    const validate = new SchemaCompiler().compileNarrowing({ properties: { r: { format: 'regex' } } });
    expect(validate({ r: 'a'.repeat(limits.formatCharsMax) })).toBe(true);
    expect(validate({ r: 'a'.repeat(limits.formatCharsMax + 1) })).toBe(false);
    expect(validate.explain()).toBe('/r: format regex');
  });

  it('keeps long values of linear formats (uri, byte) valid', () => {
    const validate = new SchemaCompiler().compileNarrowing({ properties: { u: { format: 'uri' }, b: { format: 'byte' } } });
    expect(validate({ u: 'https://example.com/' + 'a'.repeat(100_000), b: 'QUJD'.repeat(50_000) })).toBe(true);
  });
});

describe("regression: an agent's narrowing is bounded in work per call", () => {
  // Each item is checked against every branch: weight (JSON values under `items`) × bytes.
  const heavy = { properties: { xs: { items: { anyOf: Array.from({ length: 30 }, (_, i) => ({ minimum: i + 1 })) } } } };

  it('refuses (argument_not_permitted) a call whose bytes times the narrowing\'s per-item weight passes narrowingWorkMax, naming the bound', async () => {
    const { ledger, token } = await ledgerWith({ type: 'object', properties: { xs: { type: 'array', items: { type: 'number' } } } });
    const child = await ledger.attenuate(token, { args: { bulk: heavy } });
    if (child.status !== 'issued') throw new Error(child.message);
    const weight = new SchemaCompiler().compileNarrowing(heavy, 'agent').fanOut;
    expect(weight).toBeGreaterThan(30);
    const items = Math.ceil(limits.narrowingWorkMax / weight / 2) + 1; // ≥ 2 bytes per item
    const big = await ledger.invoke(child.token, 'bulk', { xs: Array.from({ length: items }, () => 99) });
    expect(big).toMatchObject({ status: 'rejected', reason: 'argument_not_permitted' });
    expect((big as { message: string }).message).toMatch(new RegExp(`over the bound of ${limits.narrowingWorkMax}`));
    expect(await ledger.invoke(child.token, 'bulk', { xs: [99, 98, 97] })).toMatchObject({ status: 'completed' });
    expect(verify(ledger.events()).ok).toBe(true);
    await ledger.close();
  });

  it("does not bound the host's own narrowing (fixed by the host, linear in the call)", async () => {
    const ledger = createLedger({ clock: () => T0 });
    await ledger.registerTool({ name: 'bulk', inputSchema: { type: 'object', properties: { xs: { type: 'array', items: { type: 'number' } } } }, run: () => 'ran' });
    const { token } = await ledger.issue({ tools: ['bulk'], args: { bulk: heavy }, expiresAt: T0 + hour, budget: { calls: 10, inputBytes: 10_000_000 } });
    expect(await ledger.invoke(token, 'bulk', { xs: Array.from({ length: 50_000 }, () => 99) })).toMatchObject({ status: 'completed' });
    await ledger.close();
  });

  it('lets an agent narrow by pattern again (RE2), and decides such a call', async () => {
    const { ledger, token } = await ledgerWith({ type: 'object', properties: { s: { type: 'string' } } });
    const child = await ledger.attenuate(token, { args: { bulk: { properties: { s: { pattern: '^drafts/' } } } } });
    if (child.status !== 'issued') throw new Error(child.message);
    expect(await ledger.invoke(child.token, 'bulk', { s: 'drafts/a' })).toMatchObject({ status: 'completed' });
    expect(await ledger.invoke(child.token, 'bulk', { s: 'etc/passwd' })).toMatchObject({ status: 'rejected', reason: 'argument_not_permitted', message: expect.stringMatching(/\/s: pattern$/) });
    await ledger.close();
  });
});

describe('regression: which engine runs a pattern', () => {
  it('runs only backtracking-safe shapes on V8 (anchored, no group or alternation, one varying quantifier), the rest on RE2', () => {
    for (const safe of ['^[a-z0-9/._-]+$', '^https?://', '^\\d{4}-\\d{2}-\\d{2}$', '^\\p{L}+$', '^[(|]+x', '^a{3}b{2,}$']) expect([safe, backtrackSafe(safe)]).toEqual([safe, true]);
    for (const unsafe of ['^(a+)+$', 'a+b', '^a*a*b', '^x|y', '^[a-z]*={0,2}$', '^(?=a)', '^(a)\\1', '^a?a?a?aaa']) expect([unsafe, backtrackSafe(unsafe)]).toEqual([unsafe, false]);
  });

  it('gives RE2 patterns their own compiled matcher (ajv keys patterns by their text)', () => {
    const validate = new SchemaCompiler().compileNarrowing({ properties: { a: { pattern: '(x|y)+1' }, b: { pattern: '(x|y)+2' } } });
    expect(validate({ a: 'xy1', b: 'yx2' })).toBe(true);
    expect(validate({ a: 'xy1', b: 'yx1' })).toBe(false);
  });
});

import { createLedger } from '../../src';
import { SchemaCompiler } from '../../src/tools/schemas';

// JSON Schema 2020-12 is the default dialect of tool input schemas and narrowings (MCP 2025-11-25,
// SEP-1613); a schema whose `$schema` names draft-07 is read as draft-07; any other `$schema` is refused.

const T0 = 1_700_000_000_000;

// The inputSchema the MCP conformance suite's reference server lists for `json_schema_2020_12_tool`
// (shared/mcp-conformance/everything-server.ts, JSON_SCHEMA_2020_12_INPUT_SCHEMA), as listed.
const conformanceSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: { address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
  properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
  additionalProperties: false,
} as const;

describe('schema dialects', () => {
  it("registers the conformance server's json_schema_2020_12_tool and checks calls against it", async () => {
    const ledger = createLedger({ clock: () => T0 });
    await ledger.registerTool({ name: 'json_schema_2020_12_tool', inputSchema: conformanceSchema, run: (args) => args });
    const { token } = await ledger.issue({ tools: ['json_schema_2020_12_tool'], expiresAt: T0 + 60_000, budget: { calls: 10, inputBytes: 10_000 } });
    expect(await ledger.invoke(token, 'json_schema_2020_12_tool', { name: 'Ada', address: { street: '1 Main', city: 'X' } })).toMatchObject({ status: 'completed' });
    expect(await ledger.invoke(token, 'json_schema_2020_12_tool', { address: { city: 7 } })).toMatchObject({ status: 'rejected', reason: 'invalid_arguments', message: expect.stringContaining('/address/city: type string') });
    expect(await ledger.invoke(token, 'json_schema_2020_12_tool', { nickname: 'x' })).toMatchObject({ status: 'rejected', reason: 'invalid_arguments' });
    expect(ledger.events()[0]).toMatchObject({ type: 'tool.registered', inputSchema: conformanceSchema });
    await ledger.close();
  });

  it('reads a schema without $schema as 2020-12: prefixItems and dependentRequired apply, a draft-07 tuple `items` is refused', () => {
    const compiler = new SchemaCompiler();
    const tuple = compiler.compileNarrowing({ properties: { p: { prefixItems: [{ type: 'string' }, { type: 'number' }], items: false } } });
    expect(tuple({ p: ['a', 1] })).toBe(true);
    expect(tuple({ p: ['a', 'b'] })).toBe(false);
    expect(tuple({ p: ['a', 1, 2] })).toBe(false);
    const dependent = compiler.compileNarrowing({ dependentRequired: { a: ['b'] } });
    expect(dependent({ a: 1 })).toBe(false);
    expect(dependent({ a: 1, b: 2 })).toBe(true);
    expect(() => compiler.compileNarrowing({ properties: { p: { items: [{ type: 'string' }] } } })).toThrow(/schema is invalid/);
  });

  it('reads a schema whose $schema names draft-07 as draft-07 (tuple `items`, `additionalItems`)', () => {
    for (const uri of ['http://json-schema.org/draft-07/schema#', 'http://json-schema.org/draft-07/schema']) {
      const validate = new SchemaCompiler().compileNarrowing({ $schema: uri, properties: { p: { items: [{ type: 'string' }], additionalItems: false } } });
      expect(validate({ p: ['a'] })).toBe(true);
      expect(validate({ p: ['a', 'b'] })).toBe(false);
      expect(validate({ p: [1] })).toBe(false);
    }
  });

  it('accepts the 2020-12 $schema written with or without its trailing #', () => {
    for (const uri of ['https://json-schema.org/draft/2020-12/schema', 'https://json-schema.org/draft/2020-12/schema#']) {
      expect(new SchemaCompiler().compileNarrowing({ $schema: uri, properties: { p: { prefixItems: [{ type: 'string' }] } } })({ p: ['a'] })).toBe(true);
    }
  });

  it('refuses any other $schema, naming it, at registerTool and at issue', async () => {
    const ledger = createLedger({ clock: () => T0 });
    await expect(ledger.registerTool({ name: 't', inputSchema: { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' }, run: () => 1 })).rejects.toThrow(
      /\$schema "http:\/\/json-schema.org\/draft-04\/schema#", which is neither JSON Schema 2020-12 nor draft-07/,
    );
    await ledger.registerTool({ name: 't', inputSchema: { type: 'object', properties: { a: { type: 'string' } } }, run: () => 1 });
    await expect(ledger.issue({ tools: ['t'], args: { t: { $schema: 'https://json-schema.org/draft/2019-09/schema' } }, expiresAt: T0 + 1, budget: { calls: 1, inputBytes: 1 } })).rejects.toThrow(/2019-09/);
    await ledger.close();
  });

  it('keeps unknown keywords and formats refused in both dialects (ajv strict)', () => {
    const compiler = new SchemaCompiler();
    expect(() => compiler.compileNarrowing({ properties: { a: { maxLenght: 2 } } })).toThrow(/unknown keyword: "maxLenght"/);
    expect(() => compiler.compileNarrowing({ $schema: 'http://json-schema.org/draft-07/schema#', properties: { a: { maxLenght: 2 } } })).toThrow(/unknown keyword: "maxLenght"/);
    expect(() => compiler.compileNarrowing({ properties: { a: { format: 'no-such-format' } } })).toThrow(/unknown format "no-such-format"/);
    expect(() => compiler.compileNarrowing({ $schema: 'http://json-schema.org/draft-07/schema#', properties: { a: { format: 'no-such-format' } } })).toThrow(/unknown format/);
  });

  it('refuses $schema below the root', () => {
    expect(() => new SchemaCompiler().compileNarrowing({ properties: { a: { $schema: 'http://json-schema.org/draft-07/schema#' } } })).toThrow(/\$schema is only read at the root/);
  });
});

describe('closing 2020-12 tuples', () => {
  it('closes object schemas inside prefixItems as it does inside items', () => {
    const validate = new SchemaCompiler().compileToolSchema({ type: 'object', properties: { p: { type: 'array', prefixItems: [{ type: 'object', properties: { a: { type: 'string' } } }] } } });
    expect(validate({ p: [{ a: 'x' }] })).toBe(true);
    expect(validate({ p: [{ a: 'x', b: 1 }] })).toBe(false);
  });
});

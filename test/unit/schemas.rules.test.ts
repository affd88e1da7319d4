import type { JsonObject } from '../../src/domain/json';
import { protoNamedAt, SchemaCompiler } from '../../src/tools/schemas';

// The rules of src/tools/schemas.ts one by one: how tool schemas are closed, which ajv options hold,
// and where a schema naming `__proto__` is refused. Every compiler is built inside its test.

function thrown(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw');
}

describe('tool schemas: closing', () => {
  it('does not close a schema that composes with allOf, even when it also lists properties', () => {
    const validate = new SchemaCompiler().compileToolSchema({ type: 'object', properties: { a: { type: 'string' } }, allOf: [{ properties: { b: { type: 'string' } } }] });
    expect(validate({ a: 'x', b: 'y' })).toBe(true);
  });

  it('does not close a nested schema that sets patternProperties', () => {
    const validate = new SchemaCompiler().compileToolSchema({
      type: 'object',
      properties: { opts: { type: 'object', properties: { n: { type: 'number' } }, patternProperties: { '^x-': { type: 'string' } } } },
    });
    expect(validate({ opts: { n: 1, other: true } })).toBe(true);
  });

  it('admits top-level keys that match patternProperties, read as Unicode patterns', () => {
    const validate = new SchemaCompiler().compileToolSchema({ type: 'object', patternProperties: { '^\\p{L}+$': { type: 'string' } } });
    expect(validate({ école: 'x' })).toBe(true);
    expect(validate({ '1': 'x' })).toBe(false);
  });

  it('refuses a null sub-schema with ajv\'s schema error, not a TypeError from the walk', () => {
    const compiler = new SchemaCompiler();
    expect(thrown(() => compiler.compileToolSchema({ type: 'object', properties: null }))).not.toBeInstanceOf(TypeError);
    expect(thrown(() => compiler.compileToolSchema({ type: 'object', properties: { a: null } })).message).toMatch(/schema is invalid/);
  });
});

describe('tool schemas: ajv options', () => {
  it('applies a narrowing without `type` (strictTypes off)', () => {
    const validate = new SchemaCompiler().compileNarrowing({ properties: { text: { maxLength: 3 } } });
    expect(validate({ text: 'abc' })).toBe(true);
    expect(validate({ text: 'abcd' })).toBe(false);
  });

  it('refuses an unknown keyword instead of ignoring it (strictSchema)', () => {
    expect(() => new SchemaCompiler().compileNarrowing({ properties: { text: { maxLenght: 3 } } })).toThrow(/unknown keyword: "maxLenght"/);
  });

  it('refuses an unknown format, saying so without ajv\'s word "ignored", and keeps ajv\'s error as the cause', () => {
    const error = thrown(() => new SchemaCompiler().compileNarrowing({ properties: { d: { format: 'no-such-format' } } }));
    expect(error.message).toBe('unknown format "no-such-format" in schema at path "#/properties/d"');
    expect((error.cause as Error).message).toMatch(/ignored in schema/);
  });

  it('refuses a schema that breaks the meta-schema (validateSchema)', () => {
    expect(() => new SchemaCompiler().compileNarrowing({ properties: { text: { maxLength: -1 } } })).toThrow(/schema is invalid/);
  });

  it('looks at own properties only: Object.prototype members are neither present nor required', () => {
    const compiler = new SchemaCompiler();
    expect(compiler.compileNarrowing({ properties: { toString: { type: 'string' } } })({})).toBe(true);
    expect(compiler.compileNarrowing({ required: ['toString'] })({})).toBe(false);
  });

  it('never writes defaults into the arguments', () => {
    const args: JsonObject = {};
    expect(new SchemaCompiler().compileNarrowing({ properties: { n: { default: 5 } } })(args)).toBe(true);
    expect(args).toEqual({});
  });

  it('refuses additional properties instead of removing them', () => {
    const args: JsonObject = { a: 1, b: 2 };
    expect(new SchemaCompiler().compileNarrowing({ properties: { a: {} }, additionalProperties: false })(args)).toBe(false);
    expect(args).toEqual({ a: 1, b: 2 });
  });

  it('compiles two different schemas with the same $id (no schema is registered by id)', () => {
    const compiler = new SchemaCompiler();
    expect(compiler.compileNarrowing({ $id: 'same', properties: { text: { maxLength: 1 } } })({ text: 'ab' })).toBe(false);
    expect(compiler.compileNarrowing({ $id: 'same', properties: { text: { maxLength: 2 } } })({ text: 'ab' })).toBe(true);
  });

  it('returns the narrowing\'s answer: true when it holds, false when it does not', () => {
    const validate = new SchemaCompiler().compileNarrowing({ properties: { n: { maximum: 3 } } });
    expect(validate({ n: 3 })).toBe(true);
    expect(validate({ n: 4 })).toBe(false);
  });
});

describe('tool schemas: numbers', () => {
  it('refuses NaN and infinities where the schema asks for a number or an integer', () => {
    const validate = new SchemaCompiler().compileToolSchema({ type: 'object', properties: { n: { type: 'number' }, i: { type: 'integer' } } });
    expect(validate({ n: 1.5, i: 2 })).toBe(true);
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      expect(validate({ n: bad })).toBe(false);
      expect(validate({ i: bad })).toBe(false);
    }
  });
});

describe('protoNamedAt', () => {
  it('names the top-level object holding a __proto__ property', () => {
    expect(protoNamedAt(JSON.parse('{"properties":{"__proto__":{}}}'))).toBe('#/properties');
  });

  it('finds __proto__ inside array items and names the path through them', () => {
    expect(protoNamedAt(JSON.parse('{"allOf":[{},{"properties":{"__proto__":{}}}]}'))).toBe('#/allOf/1/properties');
  });

  it('names a required list that holds __proto__', () => {
    expect(protoNamedAt({ type: 'object', properties: { a: { required: ['x', '__proto__'] } } })).toBe('#/properties/a/required');
  });

  it('leaves __proto__ alone as a value outside required (an enum member is data, not a name)', () => {
    expect(protoNamedAt({ properties: { k: { enum: ['__proto__'] } } })).toBeUndefined();
    expect(new SchemaCompiler().compileNarrowing({ properties: { k: { enum: ['__proto__'] } } })({ k: '__proto__' })).toBe(true);
  });
});

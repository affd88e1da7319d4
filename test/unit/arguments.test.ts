import { inputBytesOf } from '../../src';
import { snapshotArguments } from '../../src/tools/arguments';
import { SchemaCompiler } from '../../src/tools/schemas';

describe('argument snapshots', () => {
  it('measures input bytes as the UTF-8 length of the RFC 8785 canonical JSON', () => {
    const snap = snapshotArguments({ b: 'é', a: 1 });
    expect(snap).toMatchObject({ ok: true, canonical: '{"a":1,"b":"é"}', bytes: 16 });
    expect(inputBytesOf({ a: 1, b: 'é' })).toBe(16);
  });

  it.each([
    ['an array', [1]],
    ['a string', 'x'],
    ['null', null],
    ['a function value', { f: () => 1 }],
    ['a bigint', { n: 1n }],
    ['NaN', { n: Number.NaN }],
    ['Infinity', { n: Number.POSITIVE_INFINITY }],
    ['a Date', { d: new Date(0) }],
    ['a class instance', { m: new Map() }],
    ['a lone surrogate', { s: '\ud800' }],
    ['a symbol key', { [Symbol('k')]: 1 }],
  ])('refuses %s as not plain JSON', (_label, value) => {
    expect(snapshotArguments(value).ok).toBe(false);
  });

  it('refuses a cycle', () => {
    const a: Record<string, unknown> = {};
    a.self = a;
    expect(snapshotArguments(a).ok).toBe(false);
  });

  it('refuses nesting deeper than the limit', () => {
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 100; i++) deep = { d: deep };
    expect(snapshotArguments(deep).ok).toBe(false);
  });

  it('refuses arguments whose getter throws', () => {
    const args = Object.defineProperty({}, 'x', { enumerable: true, get: () => { throw new Error('boom'); } });
    expect(snapshotArguments(args).ok).toBe(false);
  });

  it('reads a getter once: the snapshot cannot change after it is checked', () => {
    let reads = 0;
    const args = Object.defineProperty({}, 'path', { enumerable: true, get: () => (reads++ === 0 ? 'drafts/a' : '../secrets') });
    const snap = snapshotArguments(args);
    expect(snap.ok && snap.value.path).toBe('drafts/a');
    expect(snap.ok && Object.isFrozen(snap.value)).toBe(true);
  });
});

describe('tool schemas', () => {
  // Built inside each test, so that per-test mutation coverage sees the compiler's options.
  const compiler = (): SchemaCompiler => new SchemaCompiler();

  it('refuses properties the tool did not declare although the schema forgot additionalProperties', () => {
    const validate = compiler().compileToolSchema({ type: 'object', properties: { path: { type: 'string' } } });
    expect(validate({ path: 'a' })).toBe(true);
    expect(validate({ path: 'a', extra: 1 })).toBe(false);
  });

  it('refuses undeclared properties of nested objects too', () => {
    const validate = compiler().compileToolSchema({ type: 'object', properties: { opts: { type: 'object', properties: { n: { type: 'number' } } } } });
    expect(validate({ opts: { n: 1 } })).toBe(true);
    expect(validate({ opts: { n: 1, sneaky: true } })).toBe(false);
  });

  it('honours a schema that declares properties across allOf branches', () => {
    const validate = compiler().compileToolSchema({ type: 'object', allOf: [{ properties: { a: { type: 'string' } } }, { properties: { b: { type: 'string' } } }] });
    expect(validate({ a: 'x', b: 'y' })).toBe(true);
    expect(validate({ a: 'x', c: 'z' })).toBe(false);
  });

  it('keeps an explicit opt-in to additional properties', () => {
    const validate = compiler().compileToolSchema({ type: 'object', properties: {}, additionalProperties: { type: 'string' } });
    expect(validate({ anything: 'x' })).toBe(true);
    expect(validate({ anything: 1 })).toBe(false);
  });

  it('does not coerce types', () => {
    const validate = compiler().compileToolSchema({ type: 'object', properties: { n: { type: 'number' } } });
    expect(validate({ n: '1' as unknown as number })).toBe(false);
  });

  it('throws on a schema that does not compile', () => {
    expect(() => compiler().compileToolSchema({ type: 'object', properties: { a: { type: 'no-such-type' } } })).toThrow();
  });
});

describe('argument snapshots across realms', () => {
  it('accepts a plain object from another realm and still refuses its class instances', async () => {
    const vm = await import('node:vm');
    expect(snapshotArguments(vm.runInNewContext('({ a: { b: [1, "x"] } })'))).toMatchObject({ ok: true, bytes: 19 });
    expect(snapshotArguments(vm.runInNewContext('({ d: new Date(0) })')).ok).toBe(false);
    expect(snapshotArguments(vm.runInNewContext('class K {}; ({ k: new K() })')).ok).toBe(false);
    expect(snapshotArguments({ k: new (class K {})() }).ok).toBe(false);
  });
});

describe('tool schemas: open objects', () => {
  // Built inside each test, so that per-test mutation coverage sees the compiler's options.
  const compiler = (): SchemaCompiler => new SchemaCompiler();

  // Regression (found by the AgentDojo experiment): `{ type: 'object' }` without properties means
  // any object, whether or not the field is nullable; it used to be closed to `{}` only.
  it('leaves a nested object schema without properties open', () => {
    const validate = compiler().compileToolSchema({
      type: 'object',
      properties: { attachments: { type: 'array', items: { type: 'object' } }, extra: { type: ['object', 'null'] } },
    });
    expect(validate({ attachments: [{ type: 'file', file_id: '19' }] })).toBe(true);
    expect(validate({ extra: { anything: 1 } })).toBe(true);
  });

  it('still refuses undeclared top-level properties of a tool that declares none', () => {
    expect(compiler().compileToolSchema({ type: 'object' })({ sneaky: 1 })).toBe(false);
    expect(compiler().compileToolSchema({ type: 'object' })({})).toBe(true);
  });
});

// Which values the direct writer prints itself and which it hands to json-canonicalize: the library
// is slower, and its errors differ (a cycle).
jest.mock('json-canonicalize', () => {
  const actual = jest.requireActual<typeof import('json-canonicalize')>('json-canonicalize');
  return { canonicalize: jest.fn(actual.canonicalize) };
});
import { canonicalize } from 'json-canonicalize';
import { canonicalJson, canonicalJsonOmitting } from '../../src/domain/canonicalJson';

const library = canonicalize as jest.MockedFunction<typeof canonicalize>;

describe('canonicalJson: what the direct writer prints itself', () => {
  beforeEach(() => library.mockClear());

  it.each([
    ['booleans', { t: true, f: false }, '{"f":false,"t":true}'],
    ['members holding undefined (left out)', { a: undefined, b: 1 }, '{"b":1}'],
    ['a value nested 128 deep', JSON.parse('['.repeat(128) + ']'.repeat(128)) as unknown, '['.repeat(128) + ']'.repeat(128)],
  ])('prints %s without the library', (_label, value, text) => {
    expect(canonicalJson(value)).toBe(text);
    expect(library).not.toHaveBeenCalled();
  });

  it('prints an object without some of its keys, members holding undefined left out, without the library', () => {
    expect(canonicalJsonOmitting({ a: undefined, b: 1, seq: 2 }, ['seq'])).toBe('{"b":1}');
    expect(library).not.toHaveBeenCalled();
  });

  it('sorts more than 16 keys in UTF-16 code unit order', () => {
    const keys = Array.from({ length: 17 }, (_, i) => String.fromCharCode(0x71 - i)); // q, p, … a
    const value = Object.fromEntries(keys.map((k, i) => [k, i]));
    expect(canonicalJson(value)).toBe(canonicalize(value));
    expect(canonicalJson(value).startsWith('{"a":16,"b":15,')).toBe(true);
  });
});

describe('canonicalJson: what goes to the library', () => {
  beforeEach(() => library.mockClear());

  it('hands a circular value to the library, which refuses it as circular (not a stack overflow)', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow('Circular reference detected');
    expect(() => canonicalJson([cyclic])).toThrow('Circular reference detected');
    const loop: unknown[] = [];
    loop.push(loop);
    expect(() => canonicalJson(loop)).toThrow('Circular reference detected');
  });

  it('prints an object without some keys through the library when a member is not plain JSON', () => {
    expect(canonicalJsonOmitting({ a: [undefined], seq: 1 }, ['seq'])).toBe('{"a":[null]}');
    expect(library).toHaveBeenCalledTimes(1);
  });

  it('lets an error from reading a value surface once, without a second walk', () => {
    let reads = 0;
    const throwing = {
      get x(): unknown {
        reads++;
        throw new Error('unreadable');
      },
    };
    expect(() => canonicalJson(throwing)).toThrow('unreadable');
    expect(reads).toBe(1);
    expect(() => canonicalJsonOmitting(throwing, ['seq'])).toThrow('unreadable');
    expect(reads).toBe(2);
    expect(library).not.toHaveBeenCalled();
  });
});

import fc from 'fast-check';
import * as canonical from '../../src/domain/canonicalJson';
import { canonicalJson, canonicalJsonOmitting } from '../../src/domain/canonicalJson';
import { sameCanonicalJson } from '../../src/domain/sameJson';

// sameCanonicalJson must answer exactly what comparing the canonical texts answers (or throw where
// building them throws), for plain JSON and for what is not: NaN and infinities, -0, undefined in
// arrays and objects, objects with toJSON, omitted keys on either side.

const keys = fc.constantFrom('a', 'b', 'seq', 'at');
const leaf = fc.oneof(
  fc.constantFrom<unknown>(0, -0, 1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, null, true, false, '', 'a', undefined),
  fc.constant({ toJSON: () => 'a' }),
  fc.constant({ toJSON: () => 1 }),
);
const { value } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, fc.array(tie('value'), { maxLength: 3 }), fc.dictionary(keys, tie('value'), { maxKeys: 3 })),
}));
const object = fc.dictionary(keys, value, { maxKeys: 4 });

/** A deep copy that keeps toJSON functions (so equal pairs are common). */
function copy(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(copy);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, typeof x === 'function' ? x : copy(x)]));
  return v;
}
const outcome = (f: () => boolean): boolean | 'throws' => {
  try {
    return f();
  } catch {
    return 'throws';
  }
};
const pair = fc.oneof(fc.tuple(object, object), object.map((o) => [o, copy(o)] as [Record<string, unknown>, unknown]));
const omitted = fc.subarray(['seq', 'at']);

describe('sameCanonicalJson', () => {
  it('answers what comparing canonical texts answers', () => {
    fc.assert(
      fc.property(pair, omitted, ([a, b], omit) => {
        const expected = outcome(() => canonicalJson(a) === canonicalJsonOmitting(b as object, omit));
        expect(outcome(() => sameCanonicalJson(a, b as object, omit))).toBe(expected);
      }),
      { numRuns: 3_000 },
    );
  });
  it('answers for an equal pair that differs only in an omitted key', () => {
    expect(sameCanonicalJson({ a: 1 }, { a: 1, seq: 5 }, ['seq'])).toBe(true);
    expect(sameCanonicalJson({ a: 1, seq: 5 }, { a: 1, seq: 5 }, ['seq'])).toBe(canonicalJson({ a: 1, seq: 5 }) === canonicalJsonOmitting({ a: 1, seq: 5 }, ['seq']));
  });
});

describe('sameCanonicalJson on plain JSON', () => {
  afterEach(() => jest.restoreAllMocks());
  // The point of it: verify compares every event without building two texts.
  it.each([
    ['flat objects', { a: 1, b: 'x' }, { b: 'x', a: 1 }],
    ['nested objects and arrays', { a: [1, { b: [true, null] }], c: { d: 'e' } }, { c: { d: 'e' }, a: [1, { b: [true, null] }] }],
    ['0 and -0', { a: 0 }, { a: -0 }],
    ['an omitted key on the logged side', { a: 1 }, { a: 1, seq: 4, at: 9 }],
    ['an undefined field on either side', { a: 1, b: undefined }, { a: 1, c: undefined }],
  ])('answers equal %s without building a text', (_label, a, b) => {
    const whole = jest.spyOn(canonical, 'canonicalJson');
    const omitting = jest.spyOn(canonical, 'canonicalJsonOmitting');
    expect(sameCanonicalJson(a, b, ['seq', 'at'])).toBe(true);
    expect(whole).not.toHaveBeenCalled();
    expect(omitting).not.toHaveBeenCalled();
  });
});

describe('sameCanonicalJson on values that look alike but print differently', () => {
  const texts = (a: object, b: object): boolean => canonicalJson(a) === canonicalJsonOmitting(b, []);
  it.each([
    ['two dates (a toJSON method on the prototype, no own keys)', { d: new Date(0) }, { d: new Date(1) }],
    ['an empty object and a date', { d: {} }, { d: new Date(0) }],
    ['a date and an empty object', { d: new Date(0) }, { d: {} }],
    ['an array and an object with its indexes and length', { v: [1] }, { v: { 0: 1, length: 1 } }],
    ['an object with an index key and an array', { v: { 0: 1 } }, { v: [1] }],
    ['a key the other side only inherits', { x: 1 }, Object.assign(Object.create({ x: 1 }) as object, { y: 1 })],
    ['arrays of different lengths sharing a prefix', { v: [1] }, { v: [1, 2] }],
    ['an undefined array slot and a number', { v: [undefined] }, { v: [1] }],
    ['an undefined array slot and an object', { v: [undefined] }, { v: [{}] }],
    ['a function member and an empty object', { v: () => 1 }, { v: {} }],
    ['null and a number', { v: null }, { v: 0 }],
    ['null and an empty object', { v: null }, { v: {} }],
  ])('answers what the texts answer for %s', (_label, a, b) => {
    expect(texts(a, b)).toBe(false);
    expect(sameCanonicalJson(a, b, [])).toBe(false);
  });
  it('answers what the texts answer when an omitted key of one side stands against another key of the other', () => {
    expect(canonicalJson({ seq: 1 }) === canonicalJsonOmitting({ seq: 1, x: 2 }, ['seq'])).toBe(false);
    expect(sameCanonicalJson({ seq: 1 }, { seq: 1, x: 2 }, ['seq'])).toBe(false);
  });
  it('throws where building the texts throws, for equal infinities', () => {
    expect(() => sameCanonicalJson({ n: Number.POSITIVE_INFINITY }, { n: Number.POSITIVE_INFINITY }, [])).toThrow();
  });
});

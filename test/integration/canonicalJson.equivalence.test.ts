import fc from 'fast-check';
import { canonicalize } from 'json-canonicalize';
import { canonicalJson, canonicalJsonOmitting } from '../../src/domain/canonicalJson';
import { sameCanonicalJson } from '../../src/domain/sameJson';

// The fast path must produce exactly the reference library's RFC 8785 text, since hashes depend on it.
describe('canonicalJson', () => {
  it('matches json-canonicalize on arbitrary JSON values, including escapes and lone surrogates', () => {
    const text = fc.string({ unit: 'binary' });
    const value = fc.jsonValue().chain((v) => fc.oneof(fc.constant(v), fc.dictionary(text, fc.oneof(text, fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant(v)))));
    // Re-parsed so that no object is shared: the library mistakes some shared (acyclic) references for cycles.
    fc.assert(fc.property(value, (v) => { const tree: unknown = JSON.parse(JSON.stringify(v)); return canonicalJson(tree) === canonicalize(tree); }), { numRuns: 2_000 });
  });

  it('serializes a shared, acyclic reference (which the library reports as circular) as RFC 8785 says', () => {
    const shared = [1];
    expect(canonicalJson({ '': shared, '\u0000': shared })).toBe('{"":[1],"\\u0000":[1]}');
  });

  it('matches json-canonicalize on values it hands to the library (undefined members, holes, toJSON)', () => {
    const hole = [1, , 2]; // eslint-disable-line no-sparse-arrays
    const cases: unknown[] = [{ a: undefined, b: 1 }, [1, undefined], hole, { d: new Date(0) }, { big: -0, e: 1e21, f: 5e-7 }, { 'é': 1, e: 2, '\u{1F600}': 3, '\uFB33': 4 }];
    for (const v of cases) expect(canonicalJson(v)).toBe(canonicalize(v));
  });

  it('throws like the library on non-finite numbers', () => {
    expect(() => canonicalJson({ n: Number.NaN })).toThrow();
  });
});

describe('sameCanonicalJson', () => {
  const envelope = ['seq', 'at', 'prevHash', 'hash'];
  const value = fc.dictionary(fc.constantFrom('type', 'seq', 'at', 'callId', 'reserved', 'x'), fc.jsonValue(), { maxKeys: 6 });

  it('agrees with comparing canonical texts, for equal, reordered and different values', () => {
    fc.assert(
      fc.property(value, value, fc.boolean(), (a, b, reuse) => {
        const left = JSON.parse(JSON.stringify(a)) as object;
        const right = (reuse ? { ...JSON.parse(JSON.stringify(a)), seq: 1, hash: 'h' } : JSON.parse(JSON.stringify(b))) as object;
        return sameCanonicalJson(left, right, envelope) === (canonicalJson(left) === canonicalJsonOmitting(right, envelope));
      }),
      { numRuns: 2_000 },
    );
  });

  it('falls back to the texts for values that are not plain JSON', () => {
    expect(sameCanonicalJson({ a: [1, undefined] }, { a: [1, null] }, [])).toBe(canonicalJson({ a: [1, undefined] }) === canonicalJson({ a: [1, null] }));
    expect(sameCanonicalJson({ d: new Date(0) }, { d: '1970-01-01T00:00:00.000Z' }, [])).toBe(true);
  });
});

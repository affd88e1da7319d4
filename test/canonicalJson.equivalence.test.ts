import fc from 'fast-check';
import { canonicalize } from 'json-canonicalize';
import { canonicalJson } from '../src/domain/canonicalJson';

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

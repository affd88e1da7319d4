import fc from 'fast-check';
import { escapeLiteral } from 'pg';
import { stringLiteral } from '../../src/stores/postgres/postgresSql';

// The append statements quote every event column with stringLiteral; it must be exactly pg's own
// quoting, which reads the same whatever standard_conforming_strings is.
describe('stringLiteral', () => {
  it("returns exactly pg's escapeLiteral for arbitrary strings, lone surrogates included", () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (text) => stringLiteral(text) === escapeLiteral(text)), { numRuns: 5_000 });
  });

  it("returns exactly pg's escapeLiteral for strings dense in quotes and backslashes", () => {
    const dense = fc.string({ unit: fc.constantFrom("'", '\\', 'a', '"', '\u00e9', '\n'), maxLength: 40 });
    fc.assert(fc.property(dense, (text) => stringLiteral(text) === escapeLiteral(text)), { numRuns: 5_000 });
  });

  it('doubles quotes, and uses the E form with doubled backslashes only when a backslash is present', () => {
    expect(stringLiteral('{"a":"b"}')).toBe(`'{"a":"b"}'`);
    expect(stringLiteral("it's")).toBe(`'it''s'`);
    expect(stringLiteral('a\\"b\'')).toBe(` E'a\\\\"b'''`);
    expect(stringLiteral('')).toBe(`''`);
  });
});

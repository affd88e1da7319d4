import fc from 'fast-check';
import { utf8Length } from '../../src/domain/utf8Length';

// utf8Length must agree with TextEncoder on every string, including ill-formed UTF-16.
const encoded = (text: string): number => new TextEncoder().encode(text).length;

describe('utf8Length', () => {
  it.each<[string, string, number]>([
    ['the empty string', '', 0],
    ['the last 1-byte code point (U+007F)', '\u007f', 1],
    ['the first 2-byte code point (U+0080)', '\u0080', 2],
    ['the last 2-byte code point (U+07FF)', '\u07ff', 2],
    ['the first 3-byte code point (U+0800)', '\u0800', 3],
    ['a 3-byte CJK character', '\u4e2d', 3],
    ['the last BMP code point (U+FFFF)', '\uffff', 3],
    ['the first 4-byte code point (U+10000, a surrogate pair)', '\ud800\udc00', 4],
    ['the last code point (U+10FFFF)', '\udbff\udfff', 4],
    ['an emoji', '\u{1f600}', 4],
    ['a lone high surrogate (U+FFFD)', '\ud800', 3],
    ['the last high surrogate, alone', '\udbff', 3],
    ['a lone low surrogate', '\udc00', 3],
    ['a high surrogate before a non-surrogate', '\ud800a', 4],
    ['two high surrogates', '\ud800\ud800', 6],
    ['a low then a high surrogate (not a pair)', '\udc00\ud800', 6],
    ['mixed widths', 'a\u00e9\u4e2d\u{1f600}', 10],
  ])('counts %s', (_label, text, bytes) => {
    expect(utf8Length(text)).toBe(bytes);
    expect(encoded(text)).toBe(bytes);
  });

  it('agrees with TextEncoder on arbitrary UTF-16, lone surrogates included', () => {
    const codeUnits = fc.array(fc.oneof(fc.integer({ min: 0, max: 0xffff }), fc.integer({ min: 0xd7f0, max: 0xe010 })), { maxLength: 40 });
    fc.assert(
      fc.property(codeUnits, (units) => {
        const text = String.fromCharCode(...units);
        return utf8Length(text) === encoded(text);
      }),
      { numRuns: 2_000 },
    );
  });
});

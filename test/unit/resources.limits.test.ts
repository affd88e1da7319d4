import { limits } from '../../src/domain/limits';
import { checkResources, isCanonicalResource, isCanonicalScope, scopeCovers } from '../../src/domain/resources';

// Byte and count limits of resources at their edges, for every UTF-8 width; and scopes in union.

/** A segment of exactly `bytes` UTF-8 bytes: as many `char` as fit, padded with ASCII 'a'. */
function segmentOf(char: string, charBytes: number, bytes: number): string {
  const n = Math.floor(bytes / charBytes);
  return char.repeat(n) + 'a'.repeat(bytes - n * charBytes);
}

describe('resource segment bytes at the limit', () => {
  const widths: [string, string, number][] = [
    ['1-byte', 'b', 1],
    ['2-byte', '\u00e9', 2],
    ['3-byte', '\u4e2d', 3],
    ['4-byte (surrogate pair)', '\u{1f600}', 4],
  ];

  it.each(widths)(`accepts a segment of exactly ${limits.segmentBytesMax} bytes of %s characters`, (_label, char, bytes) => {
    expect(isCanonicalResource(`notes:/${segmentOf(char, bytes, limits.segmentBytesMax)}`)).toBe(true);
  });

  it.each(widths)(`rejects a segment of ${limits.segmentBytesMax + 1} bytes of %s characters`, (_label, char, bytes) => {
    expect(isCanonicalResource(`notes:/${segmentOf(char, bytes, limits.segmentBytesMax + 1)}`)).toBe(false);
  });

  it('counts a surrogate pair as 4 bytes, not as two 3-byte halves', () => {
    // 63 pairs are 252 bytes (fits); counted as 6 bytes each they would be 378.
    expect(isCanonicalResource(`notes:/${'\u{1f600}'.repeat(63)}`)).toBe(true);
  });
});

describe('resource bytes at the limit', () => {
  /** A resource of exactly `bytes` bytes from segments of `char`. */
  function resourceOf(char: string, charBytes: number, bytes: number): string {
    const head = 'notes:/';
    const segments: string[] = [];
    let left = bytes - head.length;
    while (left > 0) {
      const size = Math.min(left, 200);
      segments.push(segmentOf(char, charBytes, size));
      left -= size + 1; // the '/' before the next segment
    }
    return head + segments.join('/');
  }

  it(`accepts ${limits.resourceBytesMax} ASCII bytes and rejects ${limits.resourceBytesMax + 1}`, () => {
    const exact = resourceOf('b', 1, limits.resourceBytesMax);
    expect(Buffer.byteLength(exact)).toBe(limits.resourceBytesMax);
    expect(isCanonicalResource(exact)).toBe(true);
    expect(isCanonicalResource(`${exact}c`)).toBe(false);
  });

  it(`rejects ${limits.resourceBytesMax + 1} bytes made of 3-byte characters, fewer than ${limits.resourceBytesMax} UTF-16 units`, () => {
    const base = resourceOf('\u4e2d', 3, limits.resourceBytesMax);
    expect(Buffer.byteLength(base)).toBe(limits.resourceBytesMax);
    expect(isCanonicalResource(base)).toBe(true);
    const over = `${base}c`;
    expect(over.length).toBeLessThan(limits.resourceBytesMax);
    expect(isCanonicalResource(over)).toBe(false);
  });
});

describe('resources per call at the limit', () => {
  const inScope = (n: number): string[] => Array.from({ length: n }, (_, i) => `notes:/drafts/r${i}`);

  it(`accepts ${limits.resourcesPerCallMax} resources in one call`, () => {
    expect(checkResources(inScope(limits.resourcesPerCallMax), ['notes:/drafts/'])).toBe('ok');
  });

  it(`rejects ${limits.resourcesPerCallMax + 1} resources in one call as invalid_resource`, () => {
    expect(checkResources(inScope(limits.resourcesPerCallMax + 1), ['notes:/drafts/'])).toBe('invalid_resource');
  });

  it('accepts a call that names no resource', () => {
    expect(checkResources([], [])).toBe('ok');
  });
});

describe('a grant with several scopes covers their union', () => {
  const scopes = ['notes:/a/', 'notes:/b/', 'files:/exact'];

  it('permits a resource covered only by the second scope', () => {
    expect(checkResources(['notes:/b/x'], scopes)).toBe('ok');
  });

  it('permits a resource equal to the last, exact scope', () => {
    expect(checkResources(['files:/exact'], scopes)).toBe('ok');
  });

  it('permits one call whose resources fall under different scopes', () => {
    expect(checkResources(['notes:/a/x', 'notes:/b/y', 'files:/exact'], scopes)).toBe('ok');
  });

  it('rejects the call when one of its resources is under no scope', () => {
    expect(checkResources(['notes:/a/x', 'notes:/c/z'], scopes)).toBe('resource_not_permitted');
    expect(checkResources(['notes:/c/z', 'notes:/a/x'], scopes)).toBe('resource_not_permitted');
  });

  it('permits nothing when the grant has no scope', () => {
    expect(checkResources(['notes:/a/x'], [])).toBe('resource_not_permitted');
  });
});

describe('scope forms', () => {
  it('accepts a canonical resource and a canonical resource with one trailing slash as scopes', () => {
    expect(isCanonicalScope('notes:/a')).toBe(true);
    expect(isCanonicalScope('notes:/a/')).toBe(true);
    expect(isCanonicalScope('notes:/')).toBe(true);
  });

  it('refuses two trailing slashes, a non-canonical stem and non-strings as scopes', () => {
    expect(isCanonicalScope('notes:/a//')).toBe(false);
    expect(isCanonicalScope('notes:/../')).toBe(false);
    expect(isCanonicalScope(42)).toBe(false);
    expect(isCanonicalScope(null)).toBe(false);
  });

  it("the root scope 'scheme:/' covers every resource of its scheme", () => {
    expect(scopeCovers('notes:/', 'notes:/a/b')).toBe(true);
    expect(scopeCovers('notes:/', 'notes:/')).toBe(true);
    expect(scopeCovers('notes:/', 'files:/a')).toBe(false);
  });
});

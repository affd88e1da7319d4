import { checkResources, isCanonicalResource, isCanonicalScope, scopeCovers } from '../../src/domain/resources';

const scopes = ['notes:/drafts/'];

describe('canonical resources: traversal and look-alike corpus', () => {
  // Each entry is a trick that must never pass as a canonical resource.
  const tricks: [string, string][] = [
    ['parent segment', 'notes:/drafts/../secrets/a'],
    ['trailing parent segment', 'notes:/drafts/..'],
    ['dot segment', 'notes:/drafts/./a'],
    ['leading dot segment', 'notes:/./drafts/a'],
    ['doubled slash', 'notes:/drafts//a'],
    ['leading doubled slash (absolute escape)', 'notes://etc/passwd'],
    ['trailing slash', 'notes:/drafts/a/'],
    ['percent-encoded dots', 'notes:/drafts/%2e%2e/secrets'],
    ['double-encoded dots', 'notes:/drafts/%252e%252e/secrets'],
    ['encoded slash after dots', 'notes:/drafts/..%2fsecrets'],
    ['backslash traversal', 'notes:/drafts/..\\secrets'],
    ['backslash separator', 'notes:/drafts\\a'],
    ['NUL byte', 'notes:/drafts/a\u0000.txt'],
    ['newline', 'notes:/drafts/a\nb'],
    ['DEL', 'notes:/drafts/a\u007f'],
    ['C1 control', 'notes:/drafts/a\u0085'],
    ['full-width dots', 'notes:/drafts/\uff0e\uff0e/secrets'],
    ['full-width solidus', 'notes:/drafts\uff0fa'],
    ['one-dot leader', 'notes:/drafts/\u2024\u2024/a'],
    ['non-NFC (decomposed é)', 'notes:/drafts/cafe\u0301'],
    ['NFKC-changing ligature', 'notes:/drafts/\ufb01le'],
    ['zero-width space', 'notes:/drafts/a\u200bb'],
    ['right-to-left override', 'notes:/drafts/\u202etxt.exe'],
    ['byte-order mark', 'notes:/drafts/\ufeffa'],
    ['lone surrogate', 'notes:/drafts/\ud800'],
    ['no scheme', '/drafts/a'],
    ['relative path', 'drafts/a'],
    ['uppercase scheme', 'NOTES:/drafts/a'],
    ['segment over 255 bytes', `notes:/drafts/${'a'.repeat(256)}`],
    ['resource over 1,024 bytes', `notes:/drafts/${Array.from({ length: 8 }, () => 'b'.repeat(200)).join('/')}`],
    ['multi-byte segment over 255 bytes', `notes:/drafts/${'é'.repeat(128)}`],
    ['empty string', ''],
  ];

  it.each(tricks)('rejects %s as not canonical', (_label, resource) => {
    expect(isCanonicalResource(resource)).toBe(false);
    expect(checkResources([resource], scopes)).toBe('invalid_resource');
  });

  it.each([null, 42, {}, ['notes:/drafts/a']])('rejects the non-string %p', (value) => {
    expect(checkResources([value], scopes)).toBe('invalid_resource');
  });

  it('accepts plain canonical resources, including NFC non-ASCII text', () => {
    for (const r of ['notes:/drafts/a', 'notes:/drafts/a/b', 'notes:/drafts/caf\u00e9', 'notes:/drafts/a.b', 'notes:/drafts/...', 'notes:/']) {
      expect(isCanonicalResource(r)).toBe(true);
    }
  });

  it('accepts a segment of exactly 255 bytes', () => {
    expect(isCanonicalResource(`notes:/${'a'.repeat(255)}`)).toBe(true);
  });
});

describe('scopes', () => {
  it("'x/' covers what is strictly below x/", () => {
    expect(checkResources(['notes:/drafts/a', 'notes:/drafts/a/b'], scopes)).toBe('ok');
  });

  it("'x/' never covers x itself", () => {
    expect(checkResources(['notes:/drafts'], scopes)).toBe('resource_not_permitted');
  });

  it("'x/' never covers a sibling sharing the prefix", () => {
    expect(checkResources(['notes:/drafts-x/a'], scopes)).toBe('resource_not_permitted');
    expect(checkResources(['notes:/draftsa'], scopes)).toBe('resource_not_permitted');
  });

  it("'x' covers only x", () => {
    expect(scopeCovers('notes:/readme', 'notes:/readme')).toBe(true);
    expect(scopeCovers('notes:/readme', 'notes:/readme/a')).toBe(false);
    expect(scopeCovers('notes:/readme', 'notes:/readme2')).toBe(false);
  });

  it('does not cross schemes', () => {
    expect(checkResources(['files:/drafts/a'], scopes)).toBe('resource_not_permitted');
  });

  it('rejects the whole call when any one resource is outside every scope', () => {
    expect(checkResources(['notes:/drafts/a', 'notes:/secrets/b'], scopes)).toBe('resource_not_permitted');
  });

  it('reports a non-canonical resource before an out-of-scope one', () => {
    expect(checkResources(['notes:/secrets/b', 'notes:/drafts/../a'], scopes)).toBe('invalid_resource');
  });

  it('validates scopes in canonical form only', () => {
    expect(isCanonicalScope('notes:/drafts/')).toBe(true);
    expect(isCanonicalScope('notes:/')).toBe(true);
    expect(isCanonicalScope('notes:/drafts//')).toBe(false);
    expect(isCanonicalScope('notes:/drafts/../')).toBe(false);
  });

  it('lets only a trailing "/" follow a canonical resource in a scope', () => {
    // Each is a canonical resource plus one more character.
    expect(isCanonicalScope('notes:/drafts%')).toBe(false);
    expect(isCanonicalScope('notes:/drafts\u0000')).toBe(false);
  });
});

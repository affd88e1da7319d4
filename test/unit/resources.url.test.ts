import { isCanonicalResource, isCanonicalScope, ResourceRefusedError, urlResource, urlScope } from '../../src';

const refusal = (url: string): string | undefined => {
  try {
    urlResource(url);
    return undefined;
  } catch (error) {
    return error instanceof ResourceRefusedError ? error.code : 'other';
  }
};

describe('urlResource', () => {
  it.each([
    ['https://Example.COM/a/b', 'https:/example.com:443/a/b'],
    ['https://example.com', 'https:/example.com:443'],
    ['https://example.com/', 'https:/example.com:443'],
    ['https://example.com/v1/', 'https:/example.com:443/v1'],
    ['http://example.com:8080/x?token=secret#frag', 'http:/example.com:8080/x'],
    ['https://example.com:443/x', 'https:/example.com:443/x'],
    ['http://example.com:80/x', 'http:/example.com:80/x'],
    ['http://example.com:0080/x', 'http:/example.com:80/x'],
    ['https://bücher.de/', 'https:/xn--bcher-kva.de:443'],
    ['http://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ/', 'http:/localhost:80'],
    ['http://0x7f.1/', 'http:/127.0.0.1:80'],
    ['http://2130706433/', 'http:/127.0.0.1:80'],
    ['http://0177.0.0.1/', 'http:/127.0.0.1:80'],
    ['http://[::ffff:127.0.0.1]:8080/', 'http:/[::ffff:7f00:1]:8080'],
    ['http://[0:0::1]/', 'http:/[::1]:80'],
    ['http://a/b/./c/../d', 'http:/a:80/b/d'],
    ['http://a/%2e%2E/x', 'http:/a:80/x'],
    ['http://a/caf%C3%A9', 'http:/a:80/café'],
    ['http://a/café', 'http:/a:80/café'],
    ['http://a/sp%20ace', 'http:/a:80/sp ace'],
    ['http://127.0.0.1:8080\\@127.0.0.1:9090/', 'http:/127.0.0.1:8080/@127.0.0.1:9090'],
  ])('%s → %s', (url, resource) => {
    expect(urlResource(url)).toBe(resource);
    expect(isCanonicalResource(resource)).toBe(true);
  });

  it.each([
    ['userinfo', 'http://user@example.com/'],
    ['user and password', 'http://user:pass@example.com/'],
    ['userinfo that looks like the allowed host', 'http://api.example.com@evil.test/'],
    ['userinfo that looks like a port', 'http://127.0.0.1:8080@127.0.0.1:9090/'],
    ['another scheme', 'ftp://example.com/x'],
    ['file URL', 'file:///etc/passwd'],
    ['javascript', 'javascript:alert(1)'],
    ['not a URL', 'not a url'],
    ['relative', '/x/y'],
    ['encoded slash', 'http://a/x%2Fy'],
    ['encoded dot-dot-slash', 'http://a/%2e%2e%2fsecret'],
    ['encoded backslash', 'http://a/x%5cy'],
    ['encoded NUL', 'http://a/x%00'],
    ['encoded newline', 'http://a/x%0a'],
    ['encoded percent', 'http://a/100%25'],
    ['malformed escape', 'http://a/%zz'],
    ['escape that is not UTF-8', 'http://a/%ff'],
    ['doubled slash', 'http://a//b'],
    ['NFD path segment', 'http://a/e\u0301'],
    ['full-width dots', 'http://a/%EF%BC%8E%EF%BC%8E'],
    ['over 8 KiB', `http://a/${'x'.repeat(9_000)}`],
  ])('refuses %s as invalid_resource', (_name, url) => {
    expect(refusal(url)).toBe('invalid_resource');
  });

  it('takes URL objects too', () => {
    expect(urlResource(new URL('https://example.com/a'))).toBe('https:/example.com:443/a');
  });
});

describe('urlScope', () => {
  it.each([
    ['https://example.com/', 'https:/example.com:443/'],
    ['https://example.com', 'https:/example.com:443/'],
    ['https://api.example.com/v1/', 'https:/api.example.com:443/v1/'],
    ['https://api.example.com/v1/status', 'https:/api.example.com:443/v1/status'],
    ['http://127.0.0.1:8080/', 'http:/127.0.0.1:8080/'],
  ])('%s → %s', (url, scope) => {
    expect(urlScope(url)).toBe(scope);
    expect(isCanonicalScope(scope)).toBe(true);
  });
  it('throws a TypeError for userinfo or a path that is not canonical', () => {
    expect(() => urlScope('https://u@example.com/')).toThrow(TypeError);
    expect(() => urlScope('https://example.com/a%2fb/')).toThrow(TypeError);
  });
});

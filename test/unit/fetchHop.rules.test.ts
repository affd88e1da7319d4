import { hopDecision, urlResourceParts } from '../../src/domain/fetchHop';

// The edges of one hop's rule that the scenario tests in test/unit/fetchHop.test.ts do not reach.

const publicAddress = '93.184.216.34';

describe('urlResourceParts', () => {
  it('splits a bracketed IPv6 host, its port and the path', () => {
    expect(urlResourceParts('http:/[::1]:8080/a/b')).toEqual({ scheme: 'http', host: '[::1]', port: 8080, rest: '/a/b' });
  });
  it('gives an empty rest for a resource that names only the authority', () => {
    expect(urlResourceParts('https:/a.example:443')).toEqual({ scheme: 'https', host: 'a.example', port: 443, rest: '' });
  });
  it('accepts port 65535 and refuses 65536', () => {
    expect(urlResourceParts('https:/a.example:65535/x')?.port).toBe(65_535);
    expect(urlResourceParts('https:/a.example:65536/x')).toBeUndefined();
  });
  it('refuses a port followed by anything but a path', () => {
    expect(urlResourceParts('https:/a.example:443x')).toBeUndefined();
    expect(urlResourceParts('https:/a.example:123456/x')).toBeUndefined();
  });
  it('refuses a scheme that only ends in http', () => {
    expect(urlResourceParts('xhttps:/a.example:443/x')).toBeUndefined();
  });
});

describe('hopDecision edges', () => {
  it('refuses a negative or fractional hop number as invalid_resource', () => {
    const facts = { resource: 'https:/a.example:443/x', address: publicAddress };
    expect(hopDecision(['https:/'], { ...facts, hop: -1 })).toBe('invalid_resource');
    expect(hopDecision(['https:/'], { ...facts, hop: 0.5 })).toBe('invalid_resource');
    expect(hopDecision(['https:/'], { ...facts, hop: 0 })).toBe('allowed');
  });
  it('refuses a resource that is not in canonical form even when a scope would cover its text', () => {
    expect(hopDecision(['https:/a.example:443/'], { hop: 0, resource: 'https:/a.example:443/v1/../admin', address: publicAddress })).toBe('invalid_resource');
  });
  it('refuses a resource whose scheme is not http or https even when a scope covers it', () => {
    expect(hopDecision(['xhttps:/'], { hop: 0, resource: 'xhttps:/a.example:443/x', address: publicAddress })).toBe('invalid_resource');
  });
  it('refuses a bracketed IPv6 literal connected to another address', () => {
    expect(hopDecision(['http:/[::1]:8080/'], { hop: 0, resource: 'http:/[::1]:8080/a', address: publicAddress })).toBe('invalid_resource');
    expect(hopDecision(['http:/[::1]:8080/'], { hop: 0, resource: 'http:/[::1]:8080/a', address: '::1' })).toBe('allowed');
  });
  it('lets a scope that is exactly the address authority name it', () => {
    expect(hopDecision(['http:/127.0.0.1:8080'], { hop: 0, resource: 'http:/127.0.0.1:8080', address: '127.0.0.1' })).toBe('allowed');
  });
  it('names an address only by a scope that starts with its authority', () => {
    const facts = { hop: 0, resource: 'http:/127.0.0.1:8080/a/x', address: '127.0.0.1' };
    expect(hopDecision(['http:/127.0.0.1:8080/a/'], facts)).toBe('allowed');
  });
});

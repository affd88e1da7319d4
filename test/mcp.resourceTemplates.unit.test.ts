import { expandTemplate, templateResources } from '../src/integrations/mcp/resourceTemplates';
import { virtualResolvers } from '../src/integrations/mcp/resolvers';
import { ResourceMapping } from '../src/integrations/mcp/resourceMapping';

const expand = (template: string, args: Record<string, unknown>, base?: string): string[] => expandTemplate(template, args as never, base, virtualResolvers);

describe('resource templates', () => {
  it('maps an absolute fs path, and a relative one against fsBase', () => {
    expect(expand('fs:{path}', { path: '/srv/a.txt' })).toEqual(['fs:/srv/a.txt']);
    expect(expand('fs:{path}', { path: 'docs/a.txt' }, '/srv/project/')).toEqual(['fs:/srv/project/docs/a.txt']);
  });

  it('refuses (throws: invalid_resource) a relative fs path without fsBase', () => {
    expect(() => expand('fs:{path}', { path: 'docs/a.txt' })).toThrow(/fsBase/);
  });

  it('expands an array argument to one resource per element', () => {
    expect(expand('fs:{paths[]}', { paths: ['/a', '/b'] })).toEqual(['fs:/a', 'fs:/b']);
    expect(expand('notes:/{dir}/{names[]}', { dir: 'd', names: ['x', 'y'] })).toEqual(['notes:/d/x', 'notes:/d/y']);
  });

  it('throws for an absent or non-string argument, so the ledger fails the call closed', () => {
    expect(() => expand('fs:{path}', {})).toThrow();
    expect(() => expand('fs:{path}', { path: 3 })).toThrow();
    expect(() => expand('fs:{paths[]}', { paths: ['/a', 1] })).toThrow();
  });

  it('does not read an inherited property as an argument', () => {
    expect(() => expand('notes:/{toString}', {})).toThrow();
  });

  it('maps a URL with its default port explicit and refuses userinfo', () => {
    expect(expand('url:{url}', { url: 'https://Example.com/a/b?q=1' })).toEqual(['https:/example.com:443/a/b']);
    expect(() => expand('url:{url}', { url: 'https://u:p@example.com/' })).toThrow(/userinfo/);
  });

  it('gives several templates their resources together', () => {
    expect(templateResources(['fs:{source}', 'fs:{destination}'], { source: '/a', destination: '/b' } as never, undefined, virtualResolvers)).toEqual(['fs:/a', 'fs:/b']);
  });

  it('fails every call closed until the grant templates are in use, then names none for a tool without templates', () => {
    const mapping = new ResourceMapping();
    expect(() => mapping.resources('read_file', { path: '/a' })).toThrow();
    mapping.use({ read_file: ['fs:{path}'] }, undefined);
    expect(mapping.resources('read_file', { path: '/a' })).toEqual(['fs:/a']);
    expect(mapping.resources('echo', { text: 'x' })).toEqual([]);
  });
});

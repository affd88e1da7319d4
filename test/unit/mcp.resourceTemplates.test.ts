import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expandTemplate, templateResources } from '../../src/integrations/mcp/resourceTemplates';
import { realResolvers } from '../../src/integrations/mcp/resolvers';
import { ResourceMapping } from '../../src/integrations/mcp/resourceMapping';

// The proxy's resolvers read the disk, so the templates are expanded over a real scratch folder.
let dir: string;
beforeAll(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'atc-templates-')));
  fs.mkdirSync(path.join(dir, 'docs'));
  fs.writeFileSync(path.join(dir, 'docs/a.txt'), 'A');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const expand = (template: string, args: Record<string, unknown>, base?: string): string[] => expandTemplate(template, args as never, base, realResolvers);

describe('resource templates', () => {
  it('maps an absolute fs path, and a relative one against fsBase', () => {
    expect(expand('fs:{path}', { path: `${dir}/docs/a.txt` })).toEqual([`fs:${dir}/docs/a.txt`]);
    expect(expand('fs:{path}', { path: 'docs/a.txt' }, `${dir}/`)).toEqual([`fs:${dir}/docs/a.txt`]);
  });

  it('refuses (throws: invalid_resource) a relative fs path without fsBase', () => {
    expect(() => expand('fs:{path}', { path: 'docs/a.txt' })).toThrow(/invalid_resource/);
  });

  it('expands an array argument to one resource per element', () => {
    expect(expand('fs:{paths[]}', { paths: [`${dir}/a`, `${dir}/b`] })).toEqual([`fs:${dir}/a`, `fs:${dir}/b`]);
    expect(expand('notes:/{dir}/{names[]}', { dir: 'd', names: ['x', 'y'] })).toEqual(['notes:/d/x', 'notes:/d/y']);
  });

  it('throws for an absent or non-string argument, so the ledger fails the call closed', () => {
    expect(() => expand('fs:{path}', {})).toThrow();
    expect(() => expand('fs:{path}', { path: 3 })).toThrow();
    expect(() => expand('fs:{paths[]}', { paths: [`${dir}/a`, 1] })).toThrow();
  });

  it('does not read an inherited property as an argument', () => {
    expect(() => expand('notes:/{toString}', {})).toThrow();
  });

  it('maps a URL to its canonical resource and refuses userinfo', () => {
    expect(expand('url:{url}', { url: 'https://Example.com/a/b?q=1' })).toEqual(['https:/example.com:443/a/b']);
    expect(() => expand('url:{url}', { url: 'https://u:p@example.com/' })).toThrow(/invalid_resource/);
  });

  it('gives several templates their resources together', () => {
    expect(templateResources(['fs:{source}', 'fs:{destination}'], { source: `${dir}/a`, destination: `${dir}/b` } as never, undefined, realResolvers)).toEqual([`fs:${dir}/a`, `fs:${dir}/b`]);
  });

  it('fails every call closed until the grant templates are in use, then names none for a tool without templates', () => {
    const mapping = new ResourceMapping();
    expect(() => mapping.resources('read_file', { path: `${dir}/a` })).toThrow();
    mapping.use({ read_file: ['fs:{path}'] }, undefined);
    expect(mapping.resources('read_file', { path: `${dir}/a` })).toEqual([`fs:${dir}/a`]);
    expect(mapping.resources('echo', { text: 'x' })).toEqual([]);
  });
});

describe('the proxy resolves fs: templates where the path really leads', () => {
  let tree: string;
  beforeAll(() => {
    tree = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'atc-proxy-fs-')));
    fs.mkdirSync(path.join(tree, 'granted/sub'), { recursive: true });
    fs.mkdirSync(path.join(tree, 'outside'));
    fs.writeFileSync(path.join(tree, 'outside/s.txt'), 'SECRET');
    fs.symlinkSync('../outside', path.join(tree, 'granted/out'));
    fs.symlinkSync('sub', path.join(tree, 'granted/in'));
    fs.mkdirSync(path.join(tree, 'granted/cafe\u0301')); // an NFD name
  });
  afterAll(() => fs.rmSync(tree, { recursive: true, force: true }));

  it('maps a symlink inside the granted folder that points outside to the outside location', () => {
    expect(expand('fs:{path}', { path: `${tree}/granted/out/s.txt` })).toEqual([`fs:${tree}/outside/s.txt`]);
    expect(expand('fs:{path}', { path: `${tree}/granted/in/new.txt` })).toEqual([`fs:${tree}/granted/sub/new.txt`]);
  });

  it('refuses . and .. components, which a server would resolve lexically rather than as the kernel does', () => {
    for (const p of [`${tree}/granted/in/../../outside/s.txt`, `${tree}/granted/./sub`, 'sub/..', './sub']) expect(() => expand('fs:{path}', { path: p }, `${tree}/granted`)).toThrow(/invalid_resource/);
  });

  it('refuses a relative path starting with ~, which a server may expand to its home', () => {
    expect(() => expand('fs:{path}', { path: '~/notes' }, `${tree}/granted`)).toThrow(/invalid_resource/);
    expect(() => expand('fs:{path}', { path: '~' }, `${tree}/granted`)).toThrow(/invalid_resource/);
  });

  it('refuses a path that does not exist when its folder holds a Unicode (NFC) twin of the missing name', () => {
    expect(() => expand('fs:{path}', { path: `${tree}/granted/café/x.txt` })).toThrow(/invalid_resource/);
    expect(expand('fs:{path}', { path: `${tree}/granted/thé.txt` })).toEqual([`fs:${tree}/granted/thé.txt`]);
  });
});

import { checkPolicy, type PolicyTool } from '../../src/policy/checkPolicy';
import { fieldPointer } from '../../src/policy/pointer';

const now = Date.parse('2026-06-01T00:00:00Z');
const str = { type: 'string' };
const tools: PolicyTool[] = [
  { name: 'read_file', inputSchema: { type: 'object', properties: { path: str, head: { type: 'integer' } }, required: ['path'], additionalProperties: false } },
  { name: 'write_file', inputSchema: { type: 'object', properties: { path: str, content: str, 'a/b': str } } },
  { name: 'list_roots', inputSchema: { type: 'object', properties: {} } },
  { name: 'anything', inputSchema: { type: 'object' } },
  { name: 'fetch', inputSchema: { type: 'object', properties: { url: str } } },
  { name: 'note', inputSchema: { type: 'object', properties: { name: str } } },
];
const clean = {
  tools: ['read_file', 'write_file'],
  resources: { read_file: ['fs:{path}'], write_file: ['fs:{path}'] },
  scopes: ['fs:/srv/'],
  expiresIn: '1h',
  budget: { calls: 5, inputBytes: 1000 },
};
const check = (policy: unknown, list: PolicyTool[] | 'none' = tools) => checkPolicy(policy, list === 'none' ? undefined : list, { now });
const found = (policy: unknown, list?: PolicyTool[] | 'none') => check(policy, list).map((p) => `${p.code} ${p.pointer}`);

describe('checkPolicy: each rule trips on the policy that breaks it and stays quiet otherwise', () => {
  it('a clean policy has no problems', () => {
    expect(check(clean)).toEqual([]);
  });

  it('unknown_tool: a tool the upstream does not list, at its place in tools', () => {
    expect(found({ ...clean, tools: ['read_file', 'write_file', 'delete_all'], scopes: [], resources: {} })).toEqual(['unknown_tool /tools/2']);
    expect(check({ ...clean, tools: ['read_file', 'write_file', 'delete_all'], scopes: [], resources: {} })[0]?.message).toMatch(/"delete_all" is not a tool/);
  });

  it('without a tool list the rules that need one are skipped', () => {
    expect(found({ ...clean, tools: ['read_file', 'write_file', 'delete_all'], args: { read_file: { properties: { pth: { maxLength: 3 } } } } }, 'none')).toEqual(['unbound_tool /tools/2']);
  });

  it('undeclared_property: a narrowing on a misspelt property, a required undeclared one, inside allOf and nested', () => {
    expect(found({ ...clean, args: { write_file: { properties: { conten: { maxLength: 5 } } } } })).toEqual(['undeclared_property /args/write_file/properties/conten']);
    expect(found({ ...clean, args: { read_file: { required: ['mode'] } } })).toEqual(['undeclared_property /args/read_file/required/0']);
    expect(found({ ...clean, args: { read_file: { allOf: [{ properties: { hed: { maximum: 5 } } }] } } })).toEqual(['undeclared_property /args/read_file/allOf/0/properties/hed']);
    expect(found({ ...clean, args: { write_file: { properties: { 'a/c': { maxLength: 1 } } } } })).toEqual(['undeclared_property /args/write_file/properties/a~1c']);
    const nested: PolicyTool = { name: 'write_file', inputSchema: { type: 'object', properties: { path: str, opts: { type: 'object', properties: { mode: str } } } } };
    expect(found({ ...clean, args: { write_file: { properties: { opts: { properties: { mdoe: { enum: ['a'] } } } } } } }, [tools[0] as PolicyTool, nested])).toEqual(['undeclared_property /args/write_file/properties/opts/properties/mdoe']);
  });

  it('undeclared_property stays quiet for declared properties and for a schema that admits any name', () => {
    expect(found({ ...clean, args: { write_file: { properties: { content: { maxLength: 5 }, 'a/b': { maxLength: 1 } }, required: ['content'] } } })).toEqual([]);
    expect(found({ ...clean, tools: ['anything'], resources: {}, scopes: [], args: { anything: { properties: { whatever: { maxLength: 5 } } } } })).toEqual([]);
  });

  it('narrowing_invalid: a narrowing with an unknown keyword does not compile', () => {
    expect(found({ ...clean, args: { write_file: { properties: { content: { maxLenght: 5 } } } } })).toEqual(['narrowing_invalid /args/write_file']);
  });

  it('undeclared_argument: a template naming an argument the tool does not declare', () => {
    expect(found({ ...clean, resources: { read_file: ['fs:{file}'], write_file: ['fs:{path}'] } })).toEqual(['undeclared_argument /resources/read_file/0']);
    expect(found({ ...clean, resources: { read_file: ['fs:{path}'], write_file: ['fs:{path}'] } })).toEqual([]);
  });

  it('unbound_tool: a granted tool without a template while the policy has fs: or url: scopes', () => {
    expect(found({ ...clean, resources: { read_file: ['fs:{path}'] } })).toEqual(['unbound_tool /tools/1']);
    expect(found({ tools: ['fetch', 'note'], resources: { fetch: ['url:{url}'] }, scopes: ['https:/api.example.com:443/'], expiresIn: '1h', budget: { calls: 1, inputBytes: 1 } })).toEqual(['unbound_tool /tools/1']);
  });

  it('unbound_tool stays quiet for a tool declared resource-free with an empty list, and without fs:/url: scopes', () => {
    expect(found({ ...clean, tools: [...clean.tools, 'list_roots'] })).toEqual(['unbound_tool /tools/2']);
    expect(found({ ...clean, tools: [...clean.tools, 'list_roots'], resources: { ...clean.resources, list_roots: [] } })).toEqual([]);
    expect(found({ tools: ['note', 'read_file'], resources: { note: ['notes:/{name}'] }, scopes: ['notes:/drafts/'], expiresIn: '1h', budget: { calls: 1, inputBytes: 1 } })).toEqual([]);
  });

  it('unreachable_scope: a scope no template can name a resource under', () => {
    expect(found({ ...clean, scopes: ['fs:/srv/', 'https:/api.example.com:443/'] })).toEqual(['unreachable_scope /scopes/1']);
    expect(found({ tools: ['note'], resources: { note: ['notes:/drafts/{name}'] }, scopes: ['notes:/drafts/', 'notes:/', 'mail:/inbox/', 'notes:/drafts'], expiresIn: '1h', budget: { calls: 1, inputBytes: 1 } })).toEqual(['unreachable_scope /scopes/2', 'unreachable_scope /scopes/3']);
    expect(found({ tools: ['fetch'], resources: { fetch: ['url:{url}'] }, scopes: ['https:/api.example.com:443/', 'http:/127.0.0.1:8080/'], expiresIn: '1h', budget: { calls: 1, inputBytes: 1 } })).toEqual([]);
  });

  it('zero_budget: calls or inputBytes of 0', () => {
    expect(found({ ...clean, budget: { calls: 0, inputBytes: 0 } })).toEqual(['zero_budget /budget/calls', 'zero_budget /budget/inputBytes']);
    expect(found({ ...clean, budget: { calls: 1, inputBytes: 1 } })).toEqual([]);
  });

  it('expired: an expiresAt at or before the injected now', () => {
    const { expiresIn: _, ...fixed } = clean;
    expect(found({ ...fixed, expiresAt: '2026-05-31T23:59:59Z' })).toEqual(['expired /expiresAt']);
    expect(found({ ...fixed, expiresAt: now })).toEqual(['expired /expiresAt']);
    expect(found({ ...fixed, expiresAt: now + 1 })).toEqual([]);
  });

  it('malformed: a policy that does not parse is one problem pointing at the field', () => {
    expect(check({ ...clean, scopes: ['fs:/a/../b/'] })).toEqual([expect.objectContaining({ code: 'malformed', pointer: '/scopes/0' })]);
    expect(found({ ...clean, budget: { calls: -1, inputBytes: 1 } })).toEqual(['malformed /budget/calls']);
    expect(found({ ...clean, resources: { 'not-granted': ['fs:{path}'] } })).toEqual(['malformed /resources/not-granted']);
    expect(found(undefined)).toEqual(['malformed ']);
    const cyclic: Record<string, unknown> = { ...clean };
    cyclic.self = cyclic;
    expect(found(cyclic)).toEqual(['malformed ']);
  });

  it('reads PolicyError field names as JSON Pointers', () => {
    expect(fieldPointer('scopes[0]')).toBe('/scopes/0');
    expect(fieldPointer('budget.meters["x/y"]')).toBe('/budget/meters/x~1y');
    expect(fieldPointer('resources["read_file"][2]')).toBe('/resources/read_file/2');
    expect(fieldPointer('(policy)')).toBe('');
  });
});

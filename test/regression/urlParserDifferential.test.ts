import { createLedger, verify } from '../../src';
import { ResourceMapping } from '../../src/integrations/mcp/resourceMapping';
import { manualClock } from '../support/fixtures';

// Regression (issue 30, defect 2): a `url:{url}` argument was checked the WHATWG way and forwarded
// as written, so an upstream parsing by RFC 3986 (curl, Python's urlsplit) fetched from another
// host than the one checked. The proxy now refuses text that parsers read differently.

async function proxiedFetchTool(): Promise<{ invoke: (url: string) => Promise<{ status: string; reason?: string }>; forwarded: string[]; events: () => ReturnType<ReturnType<typeof createLedger>['events']> }> {
  const clock = manualClock();
  const ledger = createLedger({ clock: clock.now });
  const mapping = new ResourceMapping();
  const forwarded: string[] = [];
  await ledger.registerTool({
    name: 'fetch',
    inputSchema: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] },
    resources: (args) => mapping.resources('fetch', args),
    run: (args) => void forwarded.push(args.url as string),
  });
  const { token } = await ledger.issue({
    tools: ['fetch'],
    resources: ['http:/a:80/', 'https:/example.com:443/', 'http:/127.0.0.1:80/', 'http:/[::1]:80/'],
    resourceTemplates: { fetch: ['url:{url}'] },
    expiresAt: clock.now() + 60_000,
    budget: { calls: 100, inputBytes: 100_000 },
  });
  mapping.use({ fetch: ['url:{url}'] }, undefined);
  return { invoke: (url) => ledger.invoke(token, 'fetch', { url }), forwarded, events: () => ledger.events() };
}

describe('regression: URL parser differential through the proxy', () => {
  it('refuses http://A\\@B/secret (host A to WHATWG, host B to urlsplit and curl): never forwarded', async () => {
    const tool = await proxiedFetchTool();
    await expect(tool.invoke('http://A\\@B/secret')).resolves.toMatchObject({ status: 'rejected', reason: 'invalid_resource' });
    expect(tool.forwarded).toEqual([]);
    expect(verify(tool.events()).ok).toBe(true);
  });

  it.each([
    ['a backslash as the path separator', 'http://a\\b.evil/x'],
    ['a backslash before the authority', 'http:\\\\a/x'],
    ['userinfo with @', 'http://a@b/x'],
    ['@ behind a colon (a port to one, userinfo to another)', 'http://a:80@b/x'],
    ['a tab WHATWG strips', 'http://a/x\ty'],
    ['a newline WHATWG strips', 'http://a/\nx'],
    ['a tab in the host', 'http://a\t/x'],
    ['leading space WHATWG trims', ' http://a/x'],
    ['a control character', 'http://a/x\u0001'],
    ['a percent-encoded authority delimiter', 'http://a%40b/x'],
    ['a percent-encoded host', 'http://%61/x'],
    ['a lone %', 'http://a/x%zz'],
    ['no // (WHATWG supplies one, RFC 3986 reads a path)', 'http:a/x'],
    ['one slash', 'http:/a/x'],
    ['three slashes', 'http:///a/x'],
    ['an encoded dot segment', 'http://a/%2e%2e/x'],
    ['a dot segment', 'http://a/b/../x'],
    ['a numeric host in another form', 'http://0x7f.1/x'],
    ['a shortened IPv4 host', 'http://127.1/x'],
    ['an IPv6 host not in its printed form', 'http://[0:0::1]/x'],
    ['an IPv6 zone', 'http://[::1%25eth0]/x'],
    ['a full-width host WHATWG maps to ASCII', 'http://ａ/x'],
    ['a bracket in the path', 'http://a/[x]'],
    ['a padded port', 'http://a:0080/x'],
    ['a bidi override', 'http://a/x\u202e'],
  ])('refuses %s', async (_label, url) => {
    const tool = await proxiedFetchTool();
    await expect(tool.invoke(url)).resolves.toMatchObject({ status: 'rejected', reason: 'invalid_resource' });
    expect(tool.forwarded).toEqual([]);
  });

  it.each([
    'http://a/secret',
    'http://A/secret',
    'http://a:80/x',
    'http://a:/x',
    'https://example.com/v1/items?q=1&sort=a#top',
    'https://example.com/v1',
    'http://127.0.0.1/x',
    'http://[::1]/x',
    'http://a/@b/x',
    'http://a/x?next=http://b@c/',
  ])('admits %s, which every parser reads as the checked host, and forwards it as written', async (url) => {
    const tool = await proxiedFetchTool();
    await expect(tool.invoke(url)).resolves.toMatchObject({ status: 'completed' });
    expect(tool.forwarded).toEqual([url]);
  });
});

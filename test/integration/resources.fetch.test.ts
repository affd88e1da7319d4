import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLedger, ResourceRefusedError, urlResource, urlScope, verify, type Ledger, type LedgerEvent } from '../../src';

/**
 * ctx.fetch against two loopback servers: A (inside the grant) and B (outside). Both count every
 * request they receive. Only 127.0.0.1 is ever connected to: names resolve through an injected
 * resolver, and everything else is refused before a connection. 0 requests may reach B.
 */
interface Server {
  readonly port: number;
  readonly seen: { path: string; host: string | undefined; authorization: string | undefined; method: string }[];
  close(): Promise<void>;
}

async function startServer(routes: (path: string, port: number) => { status: number; location?: string; body?: string }): Promise<Server> {
  const seen: Server['seen'] = [];
  const server = http.createServer((req, res) => {
    seen.push({ path: req.url ?? '', host: req.headers.host, authorization: req.headers.authorization, method: req.method ?? '' });
    req.resume();
    const answer = routes(req.url ?? '', (server.address() as AddressInfo).port);
    res.writeHead(answer.status, answer.location === undefined ? {} : { location: answer.location });
    res.end(answer.body ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, seen, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

let a: Server;
let b: Server;
let ledger: Ledger;
const resolved: string[] = [];
// The only names that resolve, both to loopback; anything else fails without touching the network.
const names: Record<string, string[]> = { 'app.test': ['127.0.0.1'], 'evil.test': ['127.0.0.1'] };

beforeAll(async () => {
  b = await startServer(() => ({ status: 200, body: 'B' }));
  a = await startServer((path, port) => {
    const redirects: Record<string, string> = {
      '/redirect-inside': '/ok',
      '/redirect-relative': '../ok',
      '/redirect-outside': `http://127.0.0.1:${b.port}/x`,
      '/redirect-metadata': 'http://169.254.169.254/latest/meta-data/',
      '/redirect-named-loopback': `http://evil.test:${b.port}/x`,
      '/redirect-userinfo': `http://127.0.0.1:${port}@127.0.0.1:${b.port}/x`,
      '/redirect-https': `https://127.0.0.1:${port}/ok`,
      '/redirect-numeric': `http://2130706433:${b.port}/x`,
      // Percent-encoded (a header is bytes): WHATWG decodes the host, then IDNA maps it to `localhost`.
      '/redirect-idna': `http://${encodeURIComponent('ⓛⓞⓒⓐⓛⓗⓞⓢⓣ')}:${b.port}/x`,
      '/redirect-mapped': `http://[::ffff:127.0.0.1]:${b.port}/x`,
      '/redirect-encoded-slash': '/a%2F..%2F..%2Fx',
      '/redirect-to-name': `http://app.test:${port}/echo`,
      '/loop': '/loop',
      '/post-303': '/ok',
    };
    if (path.startsWith('/chain/')) {
      const n = Number(path.slice('/chain/'.length));
      return n >= 10 ? { status: 200, body: `end of chain at ${n}` } : { status: 307, location: `/chain/${n + 1}` };
    }
    const location = redirects[path];
    if (location !== undefined) return { status: path === '/post-303' ? 303 : 302, location };
    return { status: 200, body: `A${path}` };
  });
  ledger = createLedger({
    resolveHost: async (host) => {
      resolved.push(host);
      const found = names[host];
      if (found === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      return found;
    },
  });
  const fetchTool = { type: 'object', properties: { url: { type: 'string' }, method: { type: 'string' } }, required: ['url'] };
  const run = async (args: { url: string; method?: string }, ctx: { fetch: (url: string, init?: { method?: string; headers?: Record<string, string>; body?: string }) => Promise<Response> }) => {
    const init = args.method === undefined ? { headers: { authorization: 'Bearer upstream-secret' } } : { method: args.method, body: 'payload', headers: { authorization: 'Bearer upstream-secret' } };
    const response = await ctx.fetch(args.url, init);
    return { status: response.status, body: await response.text() };
  };
  // web.raw names no resources: ctx.fetch decides every hop itself. web.get also checks the URL at admission.
  await ledger.registerTool<{ url: string; method?: string }>({ name: 'web.raw', inputSchema: fetchTool, run });
  await ledger.registerTool<{ url: string; method?: string }>({ name: 'web.get', inputSchema: fetchTool, resources: (args) => [urlResource(args.url)], run });
});
afterAll(async () => {
  await ledger.close();
  await a.close();
  await b.close();
});
beforeEach(() => {
  a.seen.length = 0;
  b.seen.length = 0;
  resolved.length = 0;
});
afterEach(() => {
  // The property every test keeps: nothing outside the scope was ever reached.
  expect(b.seen).toEqual([]);
});

async function grant(scopes: string[]): Promise<string> {
  const { token } = await ledger.issue({ tools: ['web.raw', 'web.get'], resources: scopes, expiresAt: Date.now() + 600_000, budget: { calls: 100, inputBytes: 100_000 } });
  return token;
}
const inScope = (): string[] => [urlScope(`http://127.0.0.1:${a.port}/`)];

async function fetchVia(token: string, url: string, tool = 'web.raw', method?: string): Promise<{ status: number; body: string } | ResourceRefusedError | string> {
  const outcome = await ledger.invoke<{ status: number; body: string }>(token, tool, method === undefined ? { url } : { url, method });
  if (outcome.status === 'completed') return outcome.value;
  if (outcome.status === 'rejected') return outcome.reason;
  return outcome.error instanceof ResourceRefusedError ? outcome.error : `failed: ${String(outcome.error)}`;
}
const refusedCode = (result: unknown): string | undefined => (result instanceof ResourceRefusedError ? result.code : undefined);

const hopsOf = (callEvents: readonly LedgerEvent[]): Array<Pick<Extract<LedgerEvent, { type: 'fetch.hop' }>, 'hop' | 'outcome' | 'reason'>> =>
  callEvents.filter((e): e is Extract<LedgerEvent, { type: 'fetch.hop' }> => e.type === 'fetch.hop').map(({ hop, outcome, reason }) => (reason === undefined ? { hop, outcome } : { hop, outcome, reason }));
const lastCallEvents = (): LedgerEvent[] => {
  const events = ledger.events();
  const admitted = [...events].reverse().find((e) => e.type === 'call.admitted') as Extract<LedgerEvent, { type: 'call.admitted' }>;
  return events.filter((e) => 'callId' in e && e.callId === admitted.callId);
};

describe('ctx.fetch inside the scope', () => {
  it('fetches, and logs one allowed hop with the checked address', async () => {
    const token = await grant(inScope());
    expect(await fetchVia(token, `http://127.0.0.1:${a.port}/ok?q=1`)).toEqual({ status: 200, body: 'A/ok?q=1' });
    expect(a.seen.map((s) => s.path)).toEqual(['/ok?q=1']);
    const hop = lastCallEvents().find((e) => e.type === 'fetch.hop');
    expect(hop).toEqual(expect.objectContaining({ hop: 0, resource: `http:/127.0.0.1:${a.port}/ok`, address: '127.0.0.1', outcome: 'allowed' }));
    expect(JSON.stringify(ledger.events())).not.toContain('q=1');
  });

  it('follows redirects inside the scope (absolute and relative), checking each hop', async () => {
    const token = await grant(inScope());
    expect(await fetchVia(token, `http://127.0.0.1:${a.port}/redirect-inside`)).toEqual({ status: 200, body: 'A/ok' });
    expect(await fetchVia(token, `http://127.0.0.1:${a.port}/x/redirect-relative`)).toEqual({ status: 200, body: 'A/x/redirect-relative' });
    expect(await fetchVia(token, `http://127.0.0.1:${a.port}/redirect-relative`)).toEqual({ status: 200, body: 'A/ok' });
    expect(hopsOf(lastCallEvents())).toEqual([{ hop: 0, outcome: 'allowed' }, { hop: 1, outcome: 'allowed' }]);
  });

  it('follows a chain of exactly 10 redirects and refuses the 11th', async () => {
    const token = await grant(inScope());
    expect(await fetchVia(token, `http://127.0.0.1:${a.port}/chain/0`)).toEqual({ status: 200, body: 'end of chain at 10' });
    const loop = await fetchVia(token, `http://127.0.0.1:${a.port}/loop`);
    expect(refusedCode(loop)).toBe('redirect_limit');
    const hops = hopsOf(lastCallEvents());
    expect(hops).toHaveLength(12);
    expect(hops[11]).toEqual({ hop: 11, outcome: 'refused', reason: 'redirect_limit' });
    expect(a.seen.filter((s) => s.path === '/loop')).toHaveLength(11);
  });

  it('turns a 303 after POST into a GET without the body', async () => {
    const token = await grant(inScope());
    expect(await fetchVia(token, `http://127.0.0.1:${a.port}/post-303`, 'web.raw', 'POST')).toEqual({ status: 200, body: 'A/ok' });
    expect(a.seen.map((s) => s.method)).toEqual(['POST', 'GET']);
  });

  it('connects a name to the address it checked (the injected resolver, asked once per hop)', async () => {
    const token = await grant([urlScope(`http://app.test:${a.port}/`), urlScope(`http://127.0.0.1:${a.port}/`)]);
    expect(await fetchVia(token, `http://app.test:${a.port}/named`)).toEqual({ status: 200, body: 'A/named' });
    expect(resolved).toEqual(['app.test']);
    expect(a.seen[0]?.host).toBe(`app.test:${a.port}`);
  });

  it('drops Authorization on a redirect to another origin', async () => {
    const token = await grant([urlScope(`http://app.test:${a.port}/`), urlScope(`http://127.0.0.1:${a.port}/`)]);
    expect(await fetchVia(token, `http://127.0.0.1:${a.port}/redirect-to-name`)).toEqual({ status: 200, body: 'A/echo' });
    expect(a.seen.map((s) => s.authorization)).toEqual(['Bearer upstream-secret', undefined]);
  });

  it('treats a backslash as the path separator WHATWG makes it: the request stays on A', async () => {
    const token = await grant(inScope());
    expect(await fetchVia(token, `http://127.0.0.1:${a.port}\\@127.0.0.1:${b.port}/`)).toEqual({ status: 200, body: `A/@127.0.0.1:${b.port}/` });
  });
});

describe('ctx.fetch refusals: 0 requests reach a server outside the scope', () => {
  const redirectVectors: ReadonlyArray<readonly [string, string, string]> = [
    ['a redirect to the other loopback server', '/redirect-outside', 'resource_not_permitted'],
    ['a redirect to cloud metadata (169.254.169.254)', '/redirect-metadata', 'resource_not_permitted'],
    ['a redirect to a name resolving to loopback', '/redirect-named-loopback', 'resource_not_permitted'],
    ['a redirect with userinfo that looks like the allowed port', '/redirect-userinfo', 'invalid_resource'],
    ['a redirect to https on the same port (scheme is part of the resource)', '/redirect-https', 'resource_not_permitted'],
    ['a redirect to a decimal IPv4 host', '/redirect-numeric', 'resource_not_permitted'],
    ['a redirect to an IDNA look-alike of localhost', '/redirect-idna', 'resource_not_permitted'],
    ['a redirect to an IPv4-mapped IPv6 loopback', '/redirect-mapped', 'resource_not_permitted'],
    ['a redirect with encoded slashes and dots', '/redirect-encoded-slash', 'invalid_resource'],
  ];
  it.each(redirectVectors)('refuses %s, logs the refused hop and verifies', async (_name, path, code) => {
    const token = await grant(inScope());
    const result = await fetchVia(token, `http://127.0.0.1:${a.port}${path}`);
    expect(refusedCode(result)).toBe(code);
    expect(hopsOf(lastCallEvents())).toEqual([{ hop: 0, outcome: 'allowed' }, { hop: 1, outcome: 'refused', reason: code }]);
    expect(a.seen.map((s) => s.path)).toEqual([path]);
    expect(resolved).toEqual([]); // a host outside every scope is never even resolved
    expect(verify(ledger.events()).ok).toBe(true);
  });

  const directVectors: ReadonlyArray<readonly [string, (p: { a: number; b: number }) => string, string]> = [
    ['the other server', (p) => `http://127.0.0.1:${p.b}/x`, 'resource_not_permitted'],
    ['userinfo carrying the allowed authority', (p) => `http://127.0.0.1:${p.a}@127.0.0.1:${p.b}/x`, 'invalid_resource'],
    ['a short-form IPv4 (127.1)', (p) => `http://127.1:${p.b}/x`, 'resource_not_permitted'],
    ['a hex IPv4', (p) => `http://0x7f000001:${p.b}/x`, 'resource_not_permitted'],
    ['an IPv6 loopback', (p) => `http://[::1]:${p.b}/x`, 'resource_not_permitted'],
    ['an IPv4-mapped IPv6 of the allowed server (not named)', (p) => `http://[::ffff:127.0.0.1]:${p.a}/x`, 'resource_not_permitted'],
    ['localhost by name', (p) => `http://localhost:${p.b}/x`, 'resource_not_permitted'],
    ['a full-width IDNA localhost', (p) => `http://ｌｏｃａｌｈｏｓｔ:${p.a}/x`, 'resource_not_permitted'],
    ['a path with an encoded slash', (p) => `http://127.0.0.1:${p.a}/a%2f..%2fx`, 'invalid_resource'],
    ['an unparseable URL', () => 'http://[::1', 'invalid_resource'],
    ['a non-http scheme', () => 'file:///etc/passwd', 'invalid_resource'],
  ];
  it.each(directVectors)('refuses %s without connecting', async (_name, url, code) => {
    const token = await grant(inScope());
    expect(refusedCode(await fetchVia(token, url({ a: a.port, b: b.port })))).toBe(code);
    expect(a.seen).toEqual([]);
    expect(hopsOf(lastCallEvents())).toEqual([{ hop: 0, outcome: 'refused', reason: code }]);
  });

  it('refuses a covered name that resolves to loopback unless a scope names the address', async () => {
    const token = await grant([urlScope(`http://app.test:${a.port}/`)]);
    expect(refusedCode(await fetchVia(token, `http://app.test:${a.port}/x`))).toBe('address_not_permitted');
    expect(a.seen).toEqual([]);
    expect(resolved).toEqual(['app.test']);
    const hop = lastCallEvents().find((e) => e.type === 'fetch.hop');
    expect(hop).toEqual(expect.objectContaining({ address: '127.0.0.1', outcome: 'refused', reason: 'address_not_permitted' }));
  });

  it('refuses a covered loopback literal through a scheme-wide scope (http:/ names no address)', async () => {
    const token = await grant(['http:/']);
    expect(refusedCode(await fetchVia(token, `http://127.0.0.1:${b.port}/x`))).toBe('address_not_permitted');
    expect(refusedCode(await fetchVia(token, `http://evil.test:${b.port}/x`))).toBe('address_not_permitted');
  });

  it('with resources at admission, refuses the first URL before the tool runs', async () => {
    const token = await grant(inScope());
    expect(await fetchVia(token, `http://127.0.0.1:${b.port}/x`, 'web.get')).toBe('resource_not_permitted');
    expect(await fetchVia(token, `http://u@127.0.0.1:${a.port}/x`, 'web.get')).toBe('invalid_resource');
    expect(await fetchVia(token, `http://127.0.0.1:${a.port}/ok`, 'web.get')).toEqual({ status: 200, body: 'A/ok' });
  });

  it('refuses a fetch after the call settled (a tool that kept its context)', async () => {
    let kept: { fetch: (url: string) => Promise<Response> } | undefined;
    await ledger.registerTool({ name: 'web.keeper', inputSchema: { type: 'object' }, run: (_args, ctx) => void (kept = ctx) });
    const { token } = await ledger.issue({ tools: ['web.keeper'], resources: inScope(), expiresAt: Date.now() + 60_000, budget: { calls: 1, inputBytes: 100 } });
    await ledger.invoke(token, 'web.keeper', {});
    const error = await kept!.fetch(`http://127.0.0.1:${a.port}/late`).catch((e: unknown) => e);
    expect(refusedCode(error)).toBe('call_not_running');
    expect(a.seen).toEqual([]);
  });

  it('keeps the whole log verifiable', () => {
    expect(verify(ledger.events())).toEqual(expect.objectContaining({ ok: true, problems: [] }));
  });
});

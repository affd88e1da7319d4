import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLedger, verify, type JsonValue, type Ledger, type LedgerEvent } from '../../src';

/**
 * Issue 30 item 7: a caller-supplied `Host` header reached an ungranted virtual host on the checked
 * address while the log recorded the granted one. One loopback server serves two virtual hosts by
 * the Host header: `granted.test` (the grant names it) and `internal.test` (it does not). Headers
 * that choose another host or path behind the checked one are refused before any hop or connection.
 */
let server: http.Server;
let port: number;
let seen: { host: string | undefined; path: string }[] = [];
let ledger: Ledger;
let token: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    seen.push({ host: req.headers.host, path: req.url ?? '' });
    req.resume();
    const virtualHost = (req.headers.host ?? '').split(':')[0];
    res.end(virtualHost === 'granted.test' ? 'GRANTED' : 'INTERNAL SECRET');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  ledger = createLedger({ resolveHost: async (host) => (host === 'granted.test' ? ['127.0.0.1'] : []) });
  await ledger.registerTool<{ headers: JsonValue }>({
    name: 'web.get',
    inputSchema: { type: 'object', properties: { headers: {} }, required: ['headers'] },
    run: async (args, ctx) => (await ctx.fetch(`http://granted.test:${port}/page`, { headers: args.headers as unknown as Record<string, string> })).text(),
  });
  // The host names the loopback address (it is the host's own server) and the granted virtual host.
  ({ token } = await ledger.issue({ tools: ['web.get'], resources: [`http:/granted.test:${port}/`, `http:/127.0.0.1:${port}/`], expiresAt: Date.now() + 600_000, budget: { calls: 100, inputBytes: 100_000 } }));
});
afterAll(async () => {
  await ledger.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
beforeEach(() => {
  seen = [];
});

async function get(headers: unknown): Promise<string> {
  const outcome = await ledger.invoke<string>(token, 'web.get', { headers } as never);
  if (outcome.status === 'completed') return outcome.value;
  if (outcome.status === 'rejected') return `rejected ${outcome.reason}`;
  return `failed ${(outcome.error as Error).name}: ${(outcome.error as Error).message}`;
}
const hopsLogged = (): number => ledger.events().filter((e: LedgerEvent) => e.type === 'fetch.hop').length;

describe('ctx.fetch and headers that pick the target', () => {
  it('reaches the granted virtual host with the URL host as Host', async () => {
    expect(await get({ accept: 'text/plain' })).toBe('GRANTED');
    expect(seen).toEqual([{ host: `granted.test:${port}`, path: '/page' }]);
  });

  it.each([
    ['Host', { Host: 'internal.test' }],
    ['host, lower case', { host: `internal.test:${port}` }],
    ['HOST, as an array of pairs', [['HOST', 'internal.test']]],
    ['X-Forwarded-Host', { 'X-Forwarded-Host': 'internal.test' }],
    ['Forwarded', { Forwarded: 'host=internal.test' }],
    ['X-Host', { 'X-Host': 'internal.test' }],
    ['X-Original-URL (a path behind the checked one)', { 'X-Original-URL': '/admin' }],
    ['X-Rewrite-URL', { 'X-Rewrite-URL': '/admin' }],
  ])('refuses %s before any hop or connection, naming the header and never its value', async (_what, headers) => {
    const hopsBefore = hopsLogged();
    const result = await get(headers);
    expect(result).toMatch(/^failed TypeError: ctx\.fetch: /);
    expect(result).not.toContain('internal.test');
    expect(result).not.toContain('/admin');
    expect(seen).toEqual([]);
    expect(hopsLogged()).toBe(hopsBefore);
  });

  it('refuses a header value the Fetch rules refuse without echoing it', async () => {
    const result = await get({ 'x-note': 'internal.test\r\nHost: internal.test' });
    expect(result).toBe('failed TypeError: ctx.fetch: a header name or value is not valid');
    expect(seen).toEqual([]);
  });

  it('leaves a log that verifies, every hop recording the host that was reached', () => {
    expect(verify(ledger.events()).ok).toBe(true);
    const hops = ledger.events().filter((e): e is Extract<LedgerEvent, { type: 'fetch.hop' }> => e.type === 'fetch.hop');
    expect(hops.map((h) => h.resource)).toEqual([`http:/granted.test:${port}/page`]);
  });
});

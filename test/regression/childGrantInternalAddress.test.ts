import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLedger, ResourceRefusedError, verify, type Ledger, type LedgerEvent } from '../../src';
import type { Command } from '../../src/domain/commands';
import { reseal } from '../support/sealedLog';
import { admit, given, issueCommand, registerNotes, T0 } from '../support/given';

/**
 * Issue 30 item 1: only the host may grant a loopback, private or link-local address. A parent
 * scoped `http:/` is refused `address_not_permitted` for 127.0.0.1; a child the agent carves out
 * of it (`http:/127.0.0.1:P/`, covered by the parent's prefix) must be refused the same, in the
 * decider and in `verify`: an attenuation never turns a refusal into an admission.
 */
let internal: { port: number; close(): Promise<void> };
let ledger: Ledger;
/** Requests the internal server received in the current test. */
let requests = 0;

beforeAll(async () => {
  const server = http.createServer((req, res) => {
    requests++;
    req.resume();
    res.end('internal secret');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  internal = {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
});
afterAll(() => internal.close());
beforeEach(async () => {
  requests = 0;
  // Names resolve only here: `app.test` is the internal server under a name.
  ledger = createLedger({ resolveHost: async (host) => (host === 'app.test' ? ['127.0.0.1'] : []) });
  await ledger.registerTool<{ url: string }>({
    name: 'web.raw',
    inputSchema: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] },
    run: async (args, ctx) => (await ctx.fetch(args.url)).text(),
  });
});
afterEach(() => ledger.close());

async function rootToken(resources: string[]): Promise<string> {
  const { token } = await ledger.issue({ tools: ['web.raw'], resources, expiresAt: Date.now() + 600_000, budget: { calls: 10, inputBytes: 10_000 } });
  return token;
}
async function childToken(parent: string, resources: string[]): Promise<string> {
  const child = await ledger.attenuate(parent, { resources });
  if (child.status !== 'issued') throw new Error(`attenuate: ${child.reason}`);
  return child.token;
}
async function fetchCode(token: string, url: string): Promise<string> {
  const outcome = await ledger.invoke<string>(token, 'web.raw', { url });
  if (outcome.status === 'completed') return 'completed';
  if (outcome.status === 'rejected') return outcome.reason;
  return outcome.error instanceof ResourceRefusedError ? outcome.error.code : `failed: ${String(outcome.error)}`;
}
const hops = (): Extract<LedgerEvent, { type: 'fetch.hop' }>[] => ledger.events().filter((e): e is Extract<LedgerEvent, { type: 'fetch.hop' }> => e.type === 'fetch.hop');

describe('a child grant cannot name an internal address its chain was refused', () => {
  it('refuses the loopback server through a child scoped to it under a scheme-wide parent', async () => {
    const parent = await rootToken(['http:/']);
    const url = `http://127.0.0.1:${internal.port}/secret`;
    expect(await fetchCode(parent, url)).toBe('address_not_permitted');
    const child = await childToken(parent, [`http:/127.0.0.1:${internal.port}/`]);
    expect(await fetchCode(child, url)).toBe('address_not_permitted');
    expect(requests).toBe(0);
    expect(hops().map((h) => h.outcome)).toEqual(['refused', 'refused']);
    expect(verify(ledger.events()).ok).toBe(true);
  });

  it('refuses a name resolving to loopback when only the child names the address', async () => {
    const parent = await rootToken(['http:/']);
    const child = await childToken(parent, [`http:/app.test:${internal.port}/`, `http:/127.0.0.1:${internal.port}/`]);
    expect(await fetchCode(child, `http://app.test:${internal.port}/secret`)).toBe('address_not_permitted');
    expect(requests).toBe(0);
  });

  it('still admits an address the host named, through a child inside that scope', async () => {
    const parent = await rootToken([`http:/127.0.0.1:${internal.port}/`]);
    const child = await childToken(parent, [`http:/127.0.0.1:${internal.port}/api/`]);
    expect(await fetchCode(child, `http://127.0.0.1:${internal.port}/api/x`)).toBe('completed');
    expect(requests).toBe(1);
    expect(verify(ledger.events()).ok).toBe(true);
  });

  it('fails verify on a forged log whose child hop to the address says allowed', async () => {
    const parent = await rootToken(['http:/']);
    const child = await childToken(parent, [`http:/127.0.0.1:${internal.port}/`]);
    expect(await fetchCode(child, `http://127.0.0.1:${internal.port}/secret`)).toBe('address_not_permitted');
    const events = ledger.events();
    const index = events.findIndex((e) => e.type === 'fetch.hop');
    const hop = events[index] as Extract<LedgerEvent, { type: 'fetch.hop' }>;
    const { reason: _reason, ...rest } = hop;
    const edited = events.slice();
    edited[index] = { ...rest, outcome: 'allowed' };
    const result = verify(reseal(edited));
    expect(result.ok).toBe(false);
    expect(result.problems[0]).toEqual(expect.objectContaining({ seq: index + 1, code: 'decision' }));
  });
});

describe('the decider: cloud metadata through a child grant', () => {
  const attenuate = (resources: string[]): Command => ({
    type: 'attenuate',
    at: T0,
    parentGrantId: 'g1',
    grantId: 'g2',
    tokenDigest: 'b'.repeat(64),
    request: { kind: 'narrowing', narrowing: { resources } },
  });
  const hop = (address: string): Command => ({ type: 'hop', at: T0 + 2, callId: 'c1', hop: 0, resource: 'http:/169.254.169.254:80/latest/meta-data', address });

  it('refuses 169.254.169.254 for a child scoped to it under a parent scoped http:/', () => {
    const chain = given(registerNotes, issueCommand({ resources: ['http:/'] }), attenuate(['http:/169.254.169.254:80/']), admit({ grantId: 'g2' }));
    const decision = chain.when(hop('169.254.169.254'));
    expect(decision).toEqual({ ok: true, events: [expect.objectContaining({ type: 'fetch.hop', outcome: 'refused', reason: 'address_not_permitted' })] });
  });

  it('admits it when the host-issued root names it', () => {
    const chain = given(registerNotes, issueCommand({ resources: ['http:/169.254.169.254:80/'] }), attenuate(['http:/169.254.169.254:80/latest/']), admit({ grantId: 'g2' }));
    expect(chain.when(hop('169.254.169.254'))).toEqual({ ok: true, events: [expect.objectContaining({ type: 'fetch.hop', outcome: 'allowed' })] });
  });
});

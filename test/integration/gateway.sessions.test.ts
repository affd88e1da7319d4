import { createLedger, type Ledger } from '../../src';
import { gatewayAuthenticator } from '../../src/integrations/gateway/authenticators';
import { parseGatewayConfig } from '../../src/integrations/gateway/config';
import { startGateway, type RunningGateway } from '../../src/integrations/gateway/gateway';
import { principalGrant } from '../../src/integrations/gateway/principalGrants';
import { manualClock } from '../support/fixtures';
import { gatewayClient, initializeBody, rawRequest, stdioUpstream } from '../support/gateway';
import { tempDir } from '../support/mcpProxy';

// The gateway in this process, with an injected clock and timers that never fire on their own: idle
// sessions expire when the clock says so, the session cap holds, an expired principal grant is
// replaced from the policy then in force.
jest.setTimeout(60_000);

const tmp = tempDir();
const clock = manualClock();
const timers: (() => void)[] = [];
const setTimer = (callback: () => void): (() => void) => {
  timers.push(callback);
  return () => undefined;
};
let ledger: Ledger;
let gateway: RunningGateway;

function config(extra: object = {}): ReturnType<typeof parseGatewayConfig> {
  return parseGatewayConfig(JSON.stringify({ ledger: './unused.sqlite', listen: '127.0.0.1:0', publicUrl: 'http://127.0.0.1:0/mcp', upstreams: { files: stdioUpstream(tmp.file('log.jsonl')) }, auth: { tokens: true }, limits: { sessionsMax: 2, sessionIdleMs: 60_000 }, ...extra }), tmp.file('gateway.json'));
}

beforeAll(async () => {
  ledger = createLedger({ clock: clock.now });
  const parsed = config();
  gateway = await startGateway({ config: parsed, ledger, authenticator: gatewayAuthenticator(parsed, ledger, clock.now), version: 'test', clock: clock.now, setTimer });
});

afterAll(async () => {
  await gateway.shutdown();
  await ledger.close();
  tmp.cleanup();
});

async function token(): Promise<string> {
  return (await ledger.issue({ tools: ['files__echo'], expiresAt: clock.now() + 3_600_000, budget: { calls: 10, inputBytes: 10_000 } })).token;
}

test('a session idle for sessionIdleMs, with no call in flight, is closed; its id is then unknown', async () => {
  const bearer = await token();
  const client = await gatewayClient(gateway.url, bearer);
  expect((await client.callTool({ name: 'files__echo', arguments: { text: 'hi' } })).isError).toBeFalsy();
  clock.advance(59_999);
  expect(await gateway.sweepIdleSessions()).toBe(0);
  clock.advance(1);
  expect(await gateway.sweepIdleSessions()).toBe(1);
  expect(gateway.sessions()).toBe(0);
  await expect(client.callTool({ name: 'files__echo', arguments: { text: 'again' } })).rejects.toThrow();
  await client.close().catch(() => undefined);
});

test('beyond sessionsMax an initialize is refused (503) and opens nothing', async () => {
  const bearer = await token();
  const open = [await gatewayClient(gateway.url, bearer), await gatewayClient(gateway.url, bearer)];
  const third = await rawRequest(gateway.url, { headers: { authorization: `Bearer ${bearer}` }, body: initializeBody });
  expect(third.status).toBe(503);
  expect(gateway.sessions()).toBe(2);
  await Promise.all(open.map((c) => c.close()));
  clock.advance(60_000);
  await gateway.sweepIdleSessions();
});

test("an expired principal grant is replaced from the policy in force at the next session; a live one is reused", async () => {
  const oauthLike = { principals: new Map([['alice', 'dev']]), policies: new Map([['dev', { tools: ['files__echo'], budget: { calls: 2, inputBytes: 100 }, expiresIn: '1h' }]]) };
  const first = await principalGrant(ledger, oauthLike, 'alice', clock.now());
  expect(first.ok).toBe(true);
  clock.advance(3_599_999);
  expect(await principalGrant(ledger, oauthLike, 'alice', clock.now())).toEqual(first);
  clock.advance(1);
  const changed = { ...oauthLike, policies: new Map([['dev', { tools: ['files__echo'], budget: { calls: 9, inputBytes: 100 }, expiresIn: '1h' }]]) };
  const second = await principalGrant(ledger, changed, 'alice', clock.now());
  expect(second.ok && first.ok && second.grantId !== first.grantId).toBe(true);
  if (second.ok) expect(ledger.usage(second.grantId).calls.limit).toBe(9);
  expect(await principalGrant(ledger, oauthLike, 'carol', clock.now())).toMatchObject({ ok: false });
});

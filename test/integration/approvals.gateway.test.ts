import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createLedger, type Ledger } from '../../src';
import type { Authenticator } from '../../src/integrations/gateway/auth';
import { gatewayAuthenticator } from '../../src/integrations/gateway/authenticators';
import { parseGatewayConfig } from '../../src/integrations/gateway/config';
import { startGateway, type RunningGateway } from '../../src/integrations/gateway/gateway';
import { stdioUpstream } from '../support/gateway';
import { tempDir } from '../support/mcpProxy';

// The gateway in this process, a session whose principal is alice, and the official client over
// Streamable HTTP declaring elicitation: a call that needs approval is asked about on the call's
// own stream, and the answer is recorded with the session's principal.
jest.setTimeout(60_000);

const tmp = tempDir();
let ledger: Ledger;
let gateway: RunningGateway;

beforeAll(async () => {
  ledger = createLedger();
  const parsed = parseGatewayConfig(JSON.stringify({ ledger: './unused.sqlite', listen: '127.0.0.1:0', publicUrl: 'http://127.0.0.1:0/mcp', upstreams: { files: stdioUpstream(tmp.file('log.jsonl')) }, auth: { tokens: true } }), tmp.file('gateway.json'));
  const tokensFactory = gatewayAuthenticator(parsed, ledger, Date.now);
  // As an OAuth session would be: the same grant, with the principal the access token names.
  const asAlice = async (resource: () => URL): Promise<Authenticator> => {
    const tokens = await tokensFactory(resource);
    return { authenticate: async (bearer) => {
      const outcome = await tokens.authenticate(bearer);
      return outcome.ok ? { ...outcome, principal: 'alice' } : outcome;
    } };
  };
  gateway = await startGateway({ config: parsed, ledger, authenticator: asAlice, version: 'test' });
});

afterAll(async () => {
  await gateway.shutdown();
  await ledger.close();
  tmp.cleanup();
});

test('a call waiting for approval is asked about by elicitation and approved as the session principal', async () => {
  const { token } = await ledger.issue({ tools: ['files__echo'], expiresAt: Date.now() + 3_600_000, budget: { calls: 10, inputBytes: 10_000 }, approvals: { files__echo: true } });
  const client = new Client({ name: 'gateway-approval-client', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
  const asked: string[] = [];
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    asked.push(request.params.message);
    return { action: 'accept', content: { decision: 'approve' } };
  });
  await client.connect(new StreamableHTTPClientTransport(gateway.url, { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  try {
    const result = (await client.callTool({ name: 'files__echo', arguments: { text: 'through the gateway' } })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain('"files__echo" needs your approval');
    expect(ledger.events().filter((e) => e.type === 'approval.resolved')).toMatchObject([{ outcome: 'approved', by: 'alice' }]);
  } finally {
    await client.close();
  }
});

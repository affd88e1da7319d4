import { ElicitRequestSchema, type CallToolResult, type ElicitRequest } from '@modelcontextprotocol/sdk/types.js';
import { openLedger, sqliteStore, type LedgerEvent, type PendingApprovalView } from '../../src';
import { atc, proxyClient, relayServer, tempDir, writeJson, type ProxyClient } from '../support/mcpProxy';

// Real processes: the official client → the built `atc proxy` (SQLite ledger) → mcpRelayServer.js,
// with `echo` asked about by a person. The client answers the proxy's elicitation, or, without the
// capability, `atc approve` from another process decides.
const policy = { tools: ['echo'], expiresIn: '1h', budget: { calls: 10, inputBytes: 10_000 }, approvals: { echo: true } };
const text = (result: unknown): string => ((result as CallToolResult).content[0] as { text: string }).text;

describe('atc proxy asks the client about a call that needs approval', () => {
  let tmp: ReturnType<typeof tempDir>;
  let open: ProxyClient[] = [];
  beforeEach(() => {
    tmp = tempDir();
    open = [];
  });
  afterEach(async () => {
    for (const proxy of open) await proxy.close();
    tmp.cleanup();
  });

  async function start(elicitation: boolean, policyFields: object = {}): Promise<ProxyClient> {
    const args = ['--ledger', tmp.file('ledger.sqlite'), '--policy', writeJson(tmp.file('policy.json'), { ...policy, ...policyFields }), '--approver', 'alice', '--', process.execPath, relayServer];
    const proxy = await proxyClient(args, {}, elicitation ? { elicitation: { form: {} } } : {});
    open.push(proxy);
    return proxy;
  }

  async function loggedEvents(): Promise<LedgerEvent[]> {
    const ledger = await openLedger({ store: sqliteStore({ path: tmp.file('ledger.sqlite') }) });
    try {
      return [...ledger.events()];
    } finally {
      await ledger.close();
    }
  }

  it('runs the call once the client approves, recording the approver and the note', async () => {
    const proxy = await start(true);
    const asked: ElicitRequest['params'][] = [];
    proxy.client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params);
      return { action: 'accept', content: { decision: 'approve', note: 'looks fine' } };
    });
    const result = await proxy.client.callTool({ name: 'echo', arguments: { text: 'secret-value-42' } });
    expect(result.isError).not.toBe(true);
    expect(text(result)).toContain('secret-value-42');
    expect(asked).toHaveLength(1);
    expect(asked[0]?.message).toMatch(/"echo" needs your approval \(approval id a_[0-9a-f]{32}/);
    expect(JSON.stringify(asked[0])).not.toContain('secret-value-42');
    expect(proxy.stderr()).not.toContain('secret-value-42');
    const resolved = (await loggedEvents()).filter((e) => e.type === 'approval.resolved');
    expect(resolved).toMatchObject([{ outcome: 'approved', by: 'alice', note: 'looks fine' }]);
  });

  it('denies the call when the client declines the question', async () => {
    const proxy = await start(true);
    proxy.client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'decline' }));
    const result = await proxy.client.callTool({ name: 'echo', arguments: { text: 'no' } });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('approval_denied');
    const resolved = (await loggedEvents()).filter((e) => e.type === 'approval.resolved');
    expect(resolved).toMatchObject([{ outcome: 'denied', by: 'alice' }]);
  });

  it('denies the call when the client answers deny in the form', async () => {
    const proxy = await start(true);
    proxy.client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept', content: { decision: 'deny' } }));
    const result = await proxy.client.callTool({ name: 'echo', arguments: { text: 'no' } });
    expect(text(result)).toContain('approval_denied');
  });

  it('without elicitation the call waits until atc approve in another process decides it', async () => {
    const proxy = await start(false);
    const call = proxy.client.callTool({ name: 'echo', arguments: { text: 'later' } });
    let pending: PendingApprovalView[] = [];
    const deadline = Date.now() + 20_000;
    while (pending.length === 0) {
      if (Date.now() > deadline) throw new Error('the call never waited for approval');
      const listed = atc(['approvals', '--ledger', tmp.file('ledger.sqlite'), '--json']);
      expect(listed.status).toBe(0);
      pending = JSON.parse(listed.stdout) as PendingApprovalView[];
    }
    expect(atc(['approve', pending[0]!.approvalId, '--ledger', tmp.file('ledger.sqlite'), '--by', 'bob']).status).toBe(0);
    expect(text(await call)).toContain('later');
    const resolved = (await loggedEvents()).filter((e) => e.type === 'approval.resolved');
    expect(resolved).toMatchObject([{ outcome: 'approved', by: 'bob' }]);
  });

  it('without elicitation and without a decision the call ends at its deadline, and the result says so', async () => {
    const proxy = await start(false, { approvalTimeoutMs: 1_000 });
    const result = await proxy.client.callTool({ name: 'echo', arguments: { text: 'nobody' } });
    expect(result.isError).toBe(true);
    expect(text(result)).toBe('rejected: approval_timeout: nobody approved this call before its approval deadline (it never ran)');
  });
});

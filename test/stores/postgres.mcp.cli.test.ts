import { echoTool, pgLedger } from '../support/pgLedger';
import { describePg, freshSchema, url } from '../support/pgTest';
import { atc, loggingServer, proxyClient, tempDir, toolCallsSeen, writeJson } from '../support/mcpProxy';

// `--ledger postgres://…` for atc issue / grants / revoke / proxy, each a real process on the test cluster.
describePg('atc issue, grants, revoke and proxy on a postgres:// ledger', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => (tmp = tempDir()));
  afterEach(() => tmp.cleanup());
  const policy = { tools: ['echo'], args: { echo: { properties: { text: { maxLength: 20 } } } }, expiresIn: '1h', budget: { calls: 100, inputBytes: 100_000 } };
  const grants = (ledger: string): { grantId: string; status: string; usage: { calls: { used: number } } }[] => JSON.parse(atc(['grants', '--ledger', ledger, '--json']).stdout) as never;

  it('issues from a policy when the tools are in the log, lists the grant, and revokes it', async () => {
    const schema = freshSchema('mcpcli');
    const host = await pgLedger(schema);
    await host.registerTool(echoTool);
    await host.close();
    const ledger = `${url()}?schema=${schema}`;
    const issued = atc(['issue', '--ledger', ledger, '--policy', writeJson(tmp.file('policy.json'), policy)]);
    expect(issued.status).toBe(0);
    const { grantId, token } = JSON.parse(issued.stdout) as { grantId: string; token: string };
    expect(token).toMatch(/^atc_/);
    expect(grants(ledger)).toEqual([expect.objectContaining({ grantId, status: 'active' })]);
    expect(atc(['grants', '--ledger', ledger]).stdout).not.toContain(token);
    expect(atc(['revoke', '--ledger', ledger, grantId]).status).toBe(0);
    expect(grants(ledger)).toEqual([expect.objectContaining({ grantId, status: 'revoked' })]);
    expect(atc(['revoke', '--ledger', ledger, 'g_unknown']).status).toBe(1);
    expect(atc(['verify', ledger]).status).toBe(0);
  });

  it('proxies calls through the PostgreSQL ledger; a revocation from another process stops the next call', async () => {
    const schema = freshSchema('mcpproxy');
    const ledger = `${url()}?schema=${schema}`;
    const log = tmp.file('server.jsonl');
    const proxy = await proxyClient(['--ledger', ledger, '--policy', writeJson(tmp.file('policy.json'), policy), '--', process.execPath, loggingServer, '--log', log]);
    try {
      const ok = await proxy.client.callTool({ name: 'echo', arguments: { text: 'hello' } });
      expect(ok.isError).toBeFalsy();
      const denied = await proxy.client.callTool({ name: 'echo', arguments: { text: 'far longer than twenty characters' } });
      expect(denied._meta).toMatchObject({ 'atc/reason': 'argument_not_permitted' });
      expect(toolCallsSeen(log, 'echo')).toHaveLength(1);
      const [grant] = grants(ledger);
      expect(grant).toMatchObject({ status: 'active', usage: { calls: { used: 1 } } });
      expect(atc(['revoke', '--ledger', ledger, (grant as { grantId: string }).grantId]).status).toBe(0);
      const after = await proxy.client.callTool({ name: 'echo', arguments: { text: 'again' } });
      expect(after._meta).toMatchObject({ 'atc/reason': 'revoked' });
      expect(toolCallsSeen(log, 'echo')).toHaveLength(1);
    } finally {
      await proxy.close();
    }
    expect(atc(['verify', ledger]).status).toBe(0);
  });

  it('fails at start, naming the problem, when the server does not answer', () => {
    const unreachable = 'postgres://postgres@127.0.0.1:1/postgres?schema=atc';
    for (const args of [['grants', '--ledger', unreachable], ['revoke', '--ledger', unreachable, 'g_x']]) {
      const run = atc(args);
      expect(run.status).toBe(2);
      expect(run.stderr).toMatch(/PostgreSQL|connect|ECONNREFUSED|unavailable/i);
    }
  });
});

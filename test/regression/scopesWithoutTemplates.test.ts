import { createLedger } from '../../src';
import { ProxyStartError, startProxy } from '../../src/integrations/mcp/startProxy';
import { parsePolicy, PolicyError, type Policy } from '../../src/integrations/mcp/policy';
import { loggingServer, tempDir } from '../support/mcpProxy';

// Regression (issue 30, defect 6): a proxied tool with no resource template names no resource, so
// an `fs:` scope bound nothing: `read_file("/etc/passwd")` was forwarded silently. A grant whose
// scopes name files or URLs must now give every granted tool templates or declare it resource-free.

const base = { expiresIn: '1h', budget: { calls: 10, inputBytes: 1_000 } };
const policyText = (policy: object): string => JSON.stringify({ ...base, ...policy });

describe('regression: scopes without templates in the proxy', () => {
  it.each([
    ['fs:', ['fs:/srv/project/']],
    ['https:', ['https:/api.example.com:443/v1/']],
    ['http:', ['notes:/a/', 'http:/127.0.0.1:8080/']],
  ])('refuses a policy whose %s scopes leave a granted tool without templates, naming the tool', (scheme, scopes) => {
    const policy = policyText({ tools: ['read_file', 'get_time'], resources: { read_file: ['fs:{path}'] }, scopes });
    expect(() => parsePolicy(policy)).toThrow(PolicyError);
    expect(() => parsePolicy(policy)).toThrow(`policy resources: tool get_time has no resource template, so its calls would pass the grant's ${scheme} scopes unchecked`);
  });

  it('accepts the tool declared resource-free with an empty template list, and scopes of other schemes', () => {
    expect(parsePolicy(policyText({ tools: ['read_file', 'get_time'], resources: { read_file: ['fs:{path}'], get_time: [] }, scopes: ['fs:/srv/'] })).resources).toEqual({ read_file: ['fs:{path}'], get_time: [] });
    expect(() => parsePolicy(policyText({ tools: ['write_note', 'echo'], resources: { write_note: ['notes:/{path}'] }, scopes: ['notes:/drafts/'] }))).not.toThrow();
    expect(() => parsePolicy(policyText({ tools: ['echo'] }))).not.toThrow();
  });

  describe('at proxy start', () => {
    let tmp: ReturnType<typeof tempDir>;
    beforeEach(() => (tmp = tempDir()));
    afterEach(() => tmp.cleanup());
    const upstream = (log: string) => ({ kind: 'stdio' as const, command: process.execPath, args: [loggingServer, '--log', log], env: { PATH: process.env.PATH ?? '' } });
    const echoSchema = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };

    it('refuses a --token-env grant (here a child of a root scoped to fs:) whose tool has no template', async () => {
      const ledger = createLedger();
      await ledger.registerTool({ name: 'echo', inputSchema: echoSchema, run: () => undefined });
      const root = await ledger.issue({ tools: ['echo'], resources: ['fs:/srv/'], expiresAt: Date.now() + 60_000, budget: { calls: 5, inputBytes: 500 } });
      const child = await ledger.attenuate(root.token, { budget: { calls: 2 } });
      if (child.status !== 'issued') throw new Error('attenuate refused');
      const log = tmp.file('server.jsonl');
      for (const token of [root.token, child.token]) {
        await expect(startProxy({ ledger, upstream: upstream(log), grant: { token }, version: '0.0.0' })).rejects.toThrow(new ProxyStartError("tool echo has no resource template, so its calls would pass the grant's fs: scopes unchecked: give it templates (e.g. \"echo\": [\"fs:{path}\"]) or declare it resource-free (\"echo\": []), in the policy the grant is issued from"));
      }
      await ledger.close();
    });

    it('refuses a policy object that skipped parsePolicy before issuing anything', async () => {
      const ledger = createLedger();
      const policy: Policy = { tools: ['echo'], scopes: ['fs:/srv/'], expiresIn: '1h', budget: { calls: 1, inputBytes: 100 } };
      await expect(startProxy({ ledger, upstream: upstream(tmp.file('server.jsonl')), grant: { policy }, version: '0.0.0' })).rejects.toThrow(/tool echo has no resource template/);
      expect(ledger.events().filter((e) => e.type === 'grant.issued')).toEqual([]);
      await ledger.close();
    });
  });
});

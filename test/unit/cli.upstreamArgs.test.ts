import { upstreamTarget } from '../../src/cli/upstreamArgs';
import { parsePolicy } from '../../src/integrations/mcp/policy';

const policy = { tools: ['echo'], expiresIn: '1h', budget: { calls: 1, inputBytes: 100 } };

describe('the upstream of atc proxy / atc issue', () => {
  it('--upstream-command splits on whitespace into the program and its arguments', () => {
    expect(upstreamTarget({ commandOption: '  npx -y  @modelcontextprotocol/server-filesystem /srv/project ' })).toMatchObject({ kind: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/srv/project'] });
  });

  it('--upstream-command refuses quotes and backslashes: no shell reads them', () => {
    for (const text of ['node "my server.js"', "node 'a b'", 'node a\\ b', 'node `x`']) expect(upstreamTarget({ commandOption: text })).toMatchObject({ error: expect.stringContaining('policy file') });
  });

  it('an empty upstream command is refused', () => {
    expect(upstreamTarget({ commandOption: '   ' })).toMatchObject({ error: expect.stringContaining('empty') });
    expect(upstreamTarget({ dashDash: [] })).toMatchObject({ error: expect.stringContaining('empty') });
  });

  it('naming the upstream twice is refused, whichever two', () => {
    const sources = { dashDash: ['node', 's.js'], commandOption: 'node s.js', url: 'http://127.0.0.1:1/mcp', policy: { command: ['node'] } } as const;
    const names = Object.keys(sources) as (keyof typeof sources)[];
    for (const a of names) for (const b of names) if (a < b) expect(upstreamTarget({ [a]: sources[a], [b]: sources[b] })).toMatchObject({ error: expect.stringContaining('once') });
  });

  it('takes the policy file\'s upstream command or URL when the command line names none', () => {
    expect(upstreamTarget({ policy: { command: ['node', 'server.js', 'a b'] } })).toMatchObject({ kind: 'stdio', command: 'node', args: ['server.js', 'a b'] });
    expect(upstreamTarget({ policy: { url: 'https://example.com/mcp' } })).toMatchObject({ kind: 'http' });
    expect(upstreamTarget({ policy: { url: 'file:///etc/passwd' } })).toMatchObject({ error: expect.stringContaining('http') });
    expect(upstreamTarget({})).toBeUndefined();
  });
});

describe('a policy file\'s "upstream"', () => {
  it('accepts { command: [...] } or { url }', () => {
    expect(parsePolicy(JSON.stringify({ ...policy, upstream: { command: ['node', 's.js'] } })).upstream).toEqual({ command: ['node', 's.js'] });
    expect(parsePolicy(JSON.stringify({ ...policy, upstream: { url: 'http://127.0.0.1/mcp' } })).upstream).toEqual({ url: 'http://127.0.0.1/mcp' });
  });

  it('refuses a command string (it would need a shell), an empty command, or both forms at once', () => {
    for (const upstream of [{ command: 'node s.js' }, { command: [] }, { command: ['node'], url: 'http://x/' }, {}]) {
      expect(() => parsePolicy(JSON.stringify({ ...policy, upstream }))).toThrow(/policy upstream/);
    }
  });
});

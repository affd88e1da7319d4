import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { root, tempDir } from '../support/mcpProxy';

// docs/gateway.md's five-minute quick start, run as written (in a temporary folder instead of
// /tmp/gw), with an MCP client standing in for the person who points one at the gateway.
jest.setTimeout(120_000);

const guide = readFileSync(path.join(root, 'docs/gateway.md'), 'utf8');

/** The `sh` blocks of the quick start section, in order. */
function quickStartBlocks(): string[] {
  const section = guide.slice(guide.indexOf('## Five minutes'), guide.indexOf('\n## ', guide.indexOf('## Five minutes') + 1));
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] as string);
}

// What the reader does between the blocks: wait for the gateway, then connect as alice and bob.
const client = (who: string, token: string, expect: string) =>
  `node "${path.join(root, 'test/fixtures/gatewayQuickStartClient.mjs')}" ${who} "${token}" '${expect}'`;
const waitForGateway = `for i in $(seq 1 100); do node -e "fetch('http://127.0.0.1:8787/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))" && break; sleep 0.1; done`;

describe('docs/gateway.md quick start', () => {
  it('runs as written: two upstreams, alice and bob on their own policies, bob revoked then enabled, the log verified', () => {
    const tmp = tempDir();
    const dir = tmp.dir;
    const [setUp, manage] = quickStartBlocks();
    expect(setUp).toContain('$ATC gateway --config gateway.json &');
    expect(manage).toContain('principals revoke bob');
    const lines = (manage as string).split('\n');
    const afterRevoke = lines.findIndex((l) => l.includes('principals revoke bob')) + 1;
    const script = [
      (setUp as string).replaceAll('/tmp/gw', dir),
      waitForGateway,
      client('alice', '$ALICE', 'project__read_text_file,notes__write_file'),
      client('bob', '$BOB', 'project__read_text_file'),
      ...lines.slice(0, afterRevoke),
      client('bob', '$BOB', 'revoked'),
      client('alice', '$ALICE', 'project__read_text_file,notes__write_file'),
      ...lines.slice(afterRevoke),
    ].join('\n');
    const file = tmp.file('quickstart.sh');
    // A failing step must not leave the gateway running.
    writeFileSync(file, `set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n${script}\n`);
    const run = spawnSync('bash', [file], { cwd: root, encoding: 'utf8', timeout: 100_000 });
    try {
      expect(run.stderr).not.toMatch(/Error:|command not found/);
      expect(run.status).toBe(0);
      expect(run.stdout).toContain('alice: project__read_text_file,notes__write_file; hello; resource_not_permitted');
      expect(run.stdout).toContain('bob: project__read_text_file; hello; resource_not_permitted');
      expect(run.stdout).toContain('bob: revoked');
      expect(run.stdout).toMatch(/^verified: head seq \d+/m);
    } finally {
      tmp.cleanup();
    }
  });
});

import fs from 'node:fs';
import { createLedger, sqliteStore } from '../../src';
import { runGrants } from '../../src/cli/commands/grants';
import { runIssue } from '../../src/cli/commands/issue';
import { runRevoke } from '../../src/cli/commands/revoke';
import { captureIo, sqliteTempDir } from '../support/sqliteFiles';

const hour = 3_600_000;
let tmp: ReturnType<typeof sqliteTempDir>;
beforeEach(() => (tmp = sqliteTempDir()));
afterEach(() => tmp.cleanup());

async function logWithTool(file: string): Promise<void> {
  const ledger = createLedger({ store: sqliteStore({ path: file }) });
  await ledger.registerTool({ name: 'read_file', inputSchema: { type: 'object', properties: { path: { type: 'string' } } }, run: () => 'x' });
  await ledger.close();
}

function policyFile(policy: object): string {
  const file = tmp.file('policy.json');
  fs.writeFileSync(file, JSON.stringify(policy));
  return file;
}

const policy = { tools: ['read_file'], resources: { read_file: ['fs:{path}'] }, scopes: ['fs:/srv/'], expiresIn: '1h', budget: { calls: 3, inputBytes: 300 } };

describe('atc issue, revoke and grants on a ledger file', () => {
  it('issues from a policy when the tools are in the log, printing { grantId, token } once', async () => {
    const ledger = tmp.file('l.sqlite');
    await logWithTool(ledger);
    const io = captureIo();
    expect(await runIssue(['--ledger', ledger, '--policy', policyFile(policy)], io)).toBe(0);
    expect(io.stdout).toHaveLength(1);
    const printed = JSON.parse(io.stdout[0] as string) as { grantId: string; token: string };
    expect(Object.keys(printed).sort()).toEqual(['grantId', 'token']);
    expect(printed.token).toMatch(/^atc_/);
  });

  it('records the policy templates in the grant.issued event', async () => {
    const ledger = tmp.file('l.sqlite');
    await logWithTool(ledger);
    const base = fs.realpathSync(tmp.dir);
    await runIssue(['--ledger', ledger, '--policy', policyFile({ ...policy, fsBase: base })], captureIo());
    const reopened = createLedger({ store: sqliteStore({ path: ledger, readonly: true }) });
    expect(reopened.events().find((e) => e.type === 'grant.issued')).toMatchObject({ resourceTemplates: { read_file: ['fs:{path}'] }, fsBase: base });
    await reopened.close();
  });

  it('issues nothing for a policy naming a tool the log does not have', async () => {
    const ledger = tmp.file('l.sqlite');
    await logWithTool(ledger);
    const io = captureIo();
    expect(await runIssue(['--ledger', ledger, '--policy', policyFile({ ...policy, tools: ['write_file'], resources: { write_file: ['fs:{path}'] } })], io)).toBe(1);
    expect(io.stderr.join('\n')).toMatch(/tools\[0\]: "write_file" is not a tool/);
    expect(io.stdout).toEqual([]);
  });

  it('refuses a malformed policy at start naming the field', async () => {
    const io = captureIo();
    expect(await runIssue(['--ledger', tmp.file('l.sqlite'), '--policy', policyFile({ ...policy, scopes: ['fs:/a/../b/'] })], io)).toBe(2);
    expect(io.stderr.join('\n')).toMatch(/policy scopes\[0\]/);
  });

  it('refuses a policy whose fsBase is not an existing directory, or whose fs: scope names a directory through a symlink', async () => {
    const ledger = tmp.file('l.sqlite');
    await logWithTool(ledger);
    const io = captureIo();
    expect(await runIssue(['--ledger', ledger, '--policy', policyFile({ ...policy, fsBase: tmp.file('missing') })], io)).toBe(2);
    expect(io.stderr.join('\n')).toMatch(/policy fsBase: must be an existing directory/);
    fs.mkdirSync(tmp.file('real'));
    fs.symlinkSync(tmp.file('real'), tmp.file('alias'));
    const aliased = captureIo();
    expect(await runIssue(['--ledger', ledger, '--policy', policyFile({ ...policy, scopes: [`fs:${fs.realpathSync(tmp.dir)}/alias/`] })], aliased)).toBe(2);
    expect(aliased.stderr.join('\n')).toMatch(/policy scopes\[0\]: names a directory whose real location is .*\/real\//);
    const reopened = createLedger({ store: sqliteStore({ path: ledger, readonly: true }) });
    expect(reopened.events().filter((e) => e.type === 'grant.issued')).toHaveLength(0);
    await reopened.close();
  });

  it('lists grants as JSON with status and usage, never a token, and shows a revocation', async () => {
    const ledger = tmp.file('l.sqlite');
    await logWithTool(ledger);
    const issueIo = captureIo();
    await runIssue(['--ledger', ledger, '--policy', policyFile(policy)], issueIo);
    const { grantId, token } = JSON.parse(issueIo.stdout[0] as string) as { grantId: string; token: string };
    const before = captureIo();
    expect(await runGrants(['--ledger', ledger, '--json'], before)).toBe(0);
    expect(JSON.parse(before.stdout[0] as string)).toEqual([{ grantId, status: 'active', usage: { calls: { limit: 3, used: 0 }, inputBytes: { limit: 300, used: 0 } } }]);
    expect(before.stdout.join('')).not.toContain(token);
    expect(await runRevoke(['--ledger', ledger, grantId], captureIo())).toBe(0);
    const after = captureIo();
    await runGrants(['--ledger', ledger, '--json'], after);
    expect(JSON.parse(after.stdout[0] as string)).toEqual([expect.objectContaining({ grantId, status: 'revoked' })]);
    const later = captureIo();
    await runGrants(['--ledger', ledger, '--json'], later, () => Date.now() + 2 * hour);
    expect(JSON.parse(later.stdout[0] as string)).toEqual([expect.objectContaining({ status: 'revoked' })]);
  });

  it('lists a child grant with its parentGrantId, revoked once its parent is', async () => {
    const ledger = tmp.file('l.sqlite');
    await logWithTool(ledger);
    const issueIo = captureIo();
    await runIssue(['--ledger', ledger, '--policy', policyFile(policy)], issueIo);
    const parent = JSON.parse(issueIo.stdout[0] as string) as { grantId: string; token: string };
    const live = createLedger({ store: sqliteStore({ path: ledger }) });
    const child = await live.attenuate(parent.token, { budget: { calls: 1 } });
    await live.close();
    if (child.status !== 'issued') throw new Error('attenuation refused');
    await runRevoke(['--ledger', ledger, parent.grantId], captureIo());
    const io = captureIo();
    await runGrants(['--ledger', ledger, '--json'], io);
    expect(JSON.parse(io.stdout[0] as string)).toEqual(
      expect.arrayContaining([expect.objectContaining({ grantId: child.grantId, parentGrantId: parent.grantId, status: 'revoked' })]),
    );
  });

  it('shows an expired grant as expired', async () => {
    const ledger = tmp.file('l.sqlite');
    await logWithTool(ledger);
    await runIssue(['--ledger', ledger, '--policy', policyFile(policy)], captureIo());
    const io = captureIo();
    await runGrants(['--ledger', ledger, '--json'], io, () => Date.now() + 2 * hour);
    expect(JSON.parse(io.stdout[0] as string)).toEqual([expect.objectContaining({ status: 'expired' })]);
  });

  it('fails revoke for an unknown grant and for a missing ledger file', async () => {
    const ledger = tmp.file('l.sqlite');
    await logWithTool(ledger);
    expect(await runRevoke(['--ledger', ledger, 'g_nope'], captureIo())).toBe(1);
    expect(await runRevoke(['--ledger', tmp.file('missing.sqlite'), 'g_nope'], captureIo())).toBe(2);
    expect(fs.existsSync(tmp.file('missing.sqlite'))).toBe(false);
  });
});

import { isDeepStrictEqual } from 'node:util';
import { canonicalJson, createLedger, eventHash, replay, sqliteStore, type LedgerEvent } from '../../src';
import { runAudit } from '../../src/cli/commands/audit';
import { runVerify } from '../../src/cli/commands/verify';
import type { GrantTreeNode } from '../../src/domain/grantTree';
import { manualClock } from '../support/fixtures';
import { captureIo, sqliteTempDir, tamper } from '../support/sqliteFiles';

const tmp = sqliteTempDir();
afterAll(() => tmp.cleanup());
const clock = manualClock(Date.UTC(2025, 0, 1));
const hour = 3_600_000;

/** A SQLite log: root (calls: 6) → mid (calls: 4) → leaf; a sibling; two calls on the leaf; mid revoked. */
async function delegationFile(name: string, snapshotEvery = 0) {
  const file = tmp.file(name);
  const ledger = createLedger({ clock: clock.now, store: sqliteStore({ path: file, snapshotEvery }) });
  await ledger.registerTool({ name: 'work', inputSchema: { type: 'object', properties: { n: { type: 'integer' } } }, run: () => 'ok' });
  const root = await ledger.issue({ tools: ['work'], expiresAt: clock.now() + hour, budget: { calls: 6, inputBytes: 1_000 } });
  const issued = async (token: string, request = {}) => {
    const outcome = await ledger.attenuate(token, request);
    if (outcome.status !== 'issued') throw new Error(outcome.reason);
    return outcome;
  };
  const mid = await issued(root.token, { budget: { calls: 4 } });
  const leaf = await issued(mid.token);
  const sibling = await issued(root.token, { budget: { calls: 1 } });
  await ledger.invoke(leaf.token, 'work', { n: 1 });
  await ledger.invoke(leaf.token, 'work', { n: 2 });
  await ledger.revokeDelegation(root.token, mid.grantId);
  return { file, ledger, root, mid, leaf, sibling };
}

describe('delegation in the SQLite store', () => {
  it('a ledger reopened from a snapshot holds the same tree, usage and chains as a full replay, and keeps charging ancestors', async () => {
    const { file, ledger, root, sibling } = await delegationFile('snap.sqlite', 3);
    await ledger.close();
    const store = sqliteStore({ path: file, snapshotEvery: 0 });
    const reopened = createLedger({ clock: clock.now, store });
    expect(store.openedFromSnapshotSeq).toBeGreaterThan(0);
    expect(isDeepStrictEqual(reopened.state(), replay(reopened.events()))).toBe(true);
    await reopened.registerTool({ name: 'work', inputSchema: { type: 'object', properties: { n: { type: 'integer' } } }, run: () => 'ok' });
    expect(await reopened.invoke(sibling.token, 'work', { n: 3 })).toMatchObject({ status: 'completed' });
    expect(reopened.usage(root.grantId).calls.used).toBe(3);
    await reopened.close();
  });

  it('atc audit --tree prints the forest with effective status and subtree usage', async () => {
    const { file, ledger, root, mid, leaf, sibling } = await delegationFile('tree.sqlite');
    await ledger.close();
    const io = captureIo();
    expect(await runAudit([file, '--tree', '--at', String(clock.now())], io)).toBe(0);
    expect(io.stdout).toEqual([
      `${root.grantId}  active  calls 2/6  bytes 14/1000  tools work`,
      `├─ ${mid.grantId}  revoked  calls 2/4  bytes 14/1000  tools work`,
      `│  └─ ${leaf.grantId}  revoked  calls 2/4  bytes 14/1000  tools work`,
      `└─ ${sibling.grantId}  active  calls 0/1  bytes 0/1000  tools work`,
    ]);
    const json = captureIo();
    expect(await runAudit([file, '--tree', '--json', '--at', String(clock.now() + hour)], json)).toBe(0);
    const forest = JSON.parse(json.stdout[0] as string) as GrantTreeNode[];
    expect(forest).toHaveLength(1);
    expect(forest[0]).toMatchObject({ grantId: root.grantId, status: 'expired', depth: 0, children: [{ grantId: mid.grantId, parentGrantId: root.grantId, status: 'revoked', depth: 1 }, { grantId: sibling.grantId, status: 'expired' }] });
    expect(JSON.stringify(forest)).not.toContain(leaf.token);
  });

  it('atc audit --tree refuses a bad --at', async () => {
    const { file, ledger } = await delegationFile('tree-bad.sqlite');
    await ledger.close();
    const io = captureIo();
    expect(await runAudit([file, '--tree', '--at', 'yesterday-ish'], io)).toBe(2);
  });

  it('atc verify passes the log, and fails it once a child is widened and re-hashed in the file', async () => {
    const { file, ledger, sibling } = await delegationFile('verify.sqlite');
    await ledger.close();
    expect(await runVerify([file], captureIo())).toBe(0);
    const events = (() => {
      const l = createLedger({ store: sqliteStore({ path: file }) });
      const all = l.events().slice();
      void l.close();
      return all;
    })();
    const i = events.findIndex((e) => e.type === 'grant.issued' && e.grantId === sibling.grantId);
    const edited = JSON.parse(JSON.stringify(events[i])) as { scope: { budget: { calls: number } }; hash?: string };
    edited.scope.budget.calls = 99;
    delete edited.hash;
    // Re-hash the edited event and every later one, as an attacker who rewrites the file would.
    const forged: LedgerEvent[] = events.slice(0, i);
    let prev = (forged[i - 1] as LedgerEvent).hash;
    for (const original of [edited, ...events.slice(i + 1)]) {
      const { hash: _old, ...base } = { ...original, prevHash: prev } as LedgerEvent;
      const event = { ...base, hash: eventHash(base as LedgerEvent) } as LedgerEvent;
      forged.push(event);
      prev = event.hash;
    }
    const updates = forged.slice(i).map((e) => `UPDATE events SET body = '${canonicalJson(e).replace(/'/g, "''")}', hash = '${e.hash}', prev_hash = '${e.prevHash}' WHERE seq = ${e.seq};`).join('\n');
    tamper(file, `DELETE FROM snapshots; ${updates}`, { dropTriggers: true });
    const io = captureIo();
    expect(await runVerify([file], io)).toBe(1);
    expect(io.stdout.concat(io.stderr).join('\n')).toMatch(/decision/);
  });

  it("a revocation with abortInFlight by one ledger aborts a descendant's running call in another ledger on the same file", async () => {
    const { file, ledger, sibling } = await delegationFile('abort.sqlite');
    let started: () => void = () => undefined;
    const running = new Promise<void>((r) => (started = r));
    const other = createLedger({ clock: clock.now, store: sqliteStore({ path: file }) });
    await other.registerTool({ name: 'work', inputSchema: { type: 'object', properties: { n: { type: 'integer' } } }, run: () => 'ok' });
    await other.registerTool({
      name: 'wait',
      inputSchema: { type: 'object', properties: {} },
      run: (_a, ctx) => new Promise((resolve) => { ctx.signal.addEventListener('abort', () => resolve('aborted')); started(); }),
    });
    await ledger.registerTool({ name: 'wait', inputSchema: { type: 'object', properties: {} }, run: () => 'never here' });
    const waiter = await ledger.issue({ tools: ['wait'], expiresAt: clock.now() + hour, budget: { calls: 2, inputBytes: 100 } });
    const child = await ledger.attenuate(waiter.token, {});
    if (child.status !== 'issued') throw new Error('refused');
    const call = other.invoke(child.token, 'wait', {});
    await running;
    await ledger.revoke(waiter.grantId, { abortInFlight: true });
    // The other ledger sees the revocation when it next folds the shared log (any command does).
    await other.invoke(sibling.token, 'work', { n: 9 });
    expect(await call).toMatchObject({ status: 'completed', value: 'aborted' });
    await other.close();
    await ledger.close();
  });
});

import { join } from 'node:path';
import { readdirSync } from 'node:fs';
import { createLedger, fsResource, fsScope, scopeCovers, verify, type Ledger } from '../../src';
import type { Command } from '../../src/domain/commands';
import { buildFsTree, type FsTree } from '../support/fsTree';
import { given, issueCommand, registerNotes, T0 } from '../support/given';
import { reseal } from '../support/sealedLog';

/**
 * Issue 32 item 8: a granted folder can be listed. The rule: an `fs:` scope ending in `/` covers
 * what is below it **and the folder itself** (`fs:/srv/project/` covers `fs:/srv/project`), never a
 * sibling that shares the prefix (`fs:/srv/project_evil`), nor its parent. Other schemes keep the
 * contract's rule (`notes:/drafts/` never covers `notes:/drafts`).
 */
describe('the rule', () => {
  it('covers the folder itself, what is below it, and nothing beside or above it', () => {
    expect(scopeCovers('fs:/srv/project/', 'fs:/srv/project')).toBe(true);
    expect(scopeCovers('fs:/srv/project/', 'fs:/srv/project/a/b')).toBe(true);
    expect(scopeCovers('fs:/srv/project/', 'fs:/srv/project_evil')).toBe(false);
    expect(scopeCovers('fs:/srv/project/', 'fs:/srv/projec')).toBe(false);
    expect(scopeCovers('fs:/srv/project/', 'fs:/srv')).toBe(false);
    expect(scopeCovers('fs:/srv/project', 'fs:/srv/project/a')).toBe(false);
    expect(scopeCovers('fs:/', 'fs:')).toBe(false);
  });

  it('leaves virtual schemes and URLs as the contract has them', () => {
    expect(scopeCovers('notes:/drafts/', 'notes:/drafts')).toBe(false);
    expect(scopeCovers('https:/h:443/v1/', 'https:/h:443/v1')).toBe(false);
  });
});

describe('listing a granted folder with only its scope', () => {
  let tree: FsTree;
  let ledger: Ledger;
  let token: string;
  beforeAll(async () => {
    tree = buildFsTree();
    ledger = createLedger();
    await ledger.registerTool<{ path: string }>({
      name: 'list_directory',
      inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      resources: (args) => [fsResource(args.path, { base: tree.allowed })],
      run: (args, ctx) => ctx.readdir(args.path),
    });
    ({ token } = await ledger.issue({ tools: ['list_directory'], resources: [fsScope(tree.allowed)], expiresAt: Date.now() + 60_000, budget: { calls: 10, inputBytes: 10_000 } }));
  });
  afterAll(async () => {
    await ledger.close();
    tree.remove();
  });

  it('lists the folder itself, by its absolute path and as "."', async () => {
    for (const path of [tree.allowed, '.', join(tree.root, 'alias')]) {
      const outcome = await ledger.invoke<string[]>(token, 'list_directory', { path });
      expect(outcome.status).toBe('completed');
      if (outcome.status === 'completed') expect([...outcome.value].sort()).toEqual(readdirSync(tree.allowed).sort());
    }
  });

  it('still refuses the sibling prefixes, the parent and a linked folder outside', async () => {
    for (const path of [join(tree.root, 'allowed_evil'), join(tree.root, 'allowed-x'), tree.root, 'esc-dir', 'link-to-parent']) {
      const outcome = await ledger.invoke(token, 'list_directory', { path });
      expect(outcome).toEqual(expect.objectContaining({ status: 'rejected', reason: 'resource_not_permitted' }));
    }
  });

  it('leaves a log that verifies', () => {
    expect(verify(ledger.events()).ok).toBe(true);
  });
});

describe('the decider and verify use the same rule', () => {
  const attenuate = (resources: string[]): Command => ({
    type: 'attenuate',
    at: T0,
    parentGrantId: 'g1',
    grantId: 'g2',
    tokenDigest: 'b'.repeat(64),
    request: { kind: 'narrowing', narrowing: { resources } },
  });

  it('issues a child scoped to the folder itself under the folder scope, and verify accepts it', () => {
    const { events } = given(registerNotes, issueCommand({ resources: ['fs:/srv/project/'] }), attenuate(['fs:/srv/project']));
    expect(events[events.length - 1]).toEqual(expect.objectContaining({ type: 'grant.issued', parentGrantId: 'g1' }));
    expect(verify(events).ok).toBe(true);
  });

  it('refuses a child on a sibling prefix, and verify refuses a log that issued one', () => {
    const chain = given(registerNotes, issueCommand({ resources: ['fs:/srv/project/'] }));
    expect(chain.when(attenuate(['fs:/srv/project_evil']))).toEqual({ ok: true, events: [expect.objectContaining({ type: 'attenuation.rejected', reason: 'attenuation_widens' })] });
    const honest = given(registerNotes, issueCommand({ resources: ['fs:/srv/project/'] }), attenuate(['fs:/srv/project/a']));
    const last = honest.events[honest.events.length - 1];
    const forged = [...honest.events.slice(0, -1), { ...last, scope: { ...(last as { scope: object }).scope, resources: ['fs:/srv/project_evil'] } }] as typeof honest.events;
    const result = verify(reseal(forged));
    expect(result.ok).toBe(false);
    expect(result.problems[0]).toEqual(expect.objectContaining({ seq: 3, code: 'decision' }));
  });
});

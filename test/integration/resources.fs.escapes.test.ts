import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLedger, fsResource, fsScope, ResourceRefusedError, type InvokeOutcome, type Ledger } from '../../src';
import { buildFsTree, type FsTree } from '../support/fsTree';

/**
 * The escape corpus (docs/resources.md lists every vector): each path is tried with read, list,
 * write, create and rename in a fresh real tree, through the ledger and the tool helpers
 * (ctx.open / readdir / writeFile / rename). 0 escapes: every vector is refused with its reason and
 * nothing outside `allowed/` is read, changed or created. 0 false refusals: every legitimate path
 * (symlinks that stay inside, new files) completes and acts on the right file.
 */
type Refusal = 'resource_not_permitted' | 'invalid_resource';
interface Vector {
  readonly name: string;
  readonly path: (t: FsTree) => string;
  readonly refused: Refusal;
}

const outsideRoot = (t: FsTree, rest: string): string => join(t.root, rest);
export const escapeVectors: readonly Vector[] = [
  { name: 'sibling prefix, relative', path: () => '../allowed_evil/e.txt', refused: 'resource_not_permitted' },
  { name: 'sibling prefix, absolute', path: (t) => outsideRoot(t, 'allowed_evil/e.txt'), refused: 'resource_not_permitted' },
  { name: 'sibling prefix with a dash', path: (t) => outsideRoot(t, 'allowed-x/e.txt'), refused: 'resource_not_permitted' },
  { name: 'sibling with a trailing space', path: () => '../allowed /e.txt', refused: 'resource_not_permitted' },
  { name: 'sibling with a trailing quote', path: () => "../allowed'/e.txt", refused: 'resource_not_permitted' },
  { name: 'sibling with a trailing double quote', path: (t) => outsideRoot(t, 'allowed"/e.txt'), refused: 'resource_not_permitted' },
  { name: 'sibling with a trailing tab', path: () => '../allowed\t/e.txt', refused: 'invalid_resource' },
  { name: '..', path: () => '../secret/s.txt', refused: 'resource_not_permitted' },
  { name: '.. after a real directory', path: () => 'sub/../../secret/s.txt', refused: 'resource_not_permitted' },
  { name: '.. inside an absolute path', path: (t) => `${t.allowed}/../secret/s.txt`, refused: 'resource_not_permitted' },
  { name: 'absolute path outside', path: (t) => outsideRoot(t, 'secret/s.txt'), refused: 'resource_not_permitted' },
  { name: 'absolute system file', path: () => '/etc/passwd', refused: 'resource_not_permitted' },
  { name: 'symlink to a file outside', path: () => 'esc-file', refused: 'resource_not_permitted' },
  { name: 'absolute symlink to a file outside', path: () => 'esc-abs', refused: 'resource_not_permitted' },
  { name: 'symlink to a folder outside (middle component)', path: () => 'esc-dir/s.txt', refused: 'resource_not_permitted' },
  { name: 'symlink to a folder outside (the folder)', path: () => 'esc-dir', refused: 'resource_not_permitted' },
  { name: 'symlink to the parent, then down', path: () => 'link-to-parent/secret/s.txt', refused: 'resource_not_permitted' },
  { name: 'chain of symlinks leading outside', path: () => 'chain-out1', refused: 'resource_not_permitted' },
  { name: '.. after a symlink applies to its target (lexically inside)', path: () => 'mid-out/../s2.txt', refused: 'resource_not_permitted' },
  { name: '.. after an inside dir symlink, then out', path: () => 'dirlink-inside/../../secret/s.txt', refused: 'resource_not_permitted' },
  { name: 'new file below a symlinked folder outside', path: () => 'esc-dir/new.txt', refused: 'resource_not_permitted' },
  { name: 'dangling symlink pointing outside', path: () => 'dangling-out', refused: 'invalid_resource' },
  { name: 'dangling symlink inside', path: () => 'dangling-in', refused: 'invalid_resource' },
  { name: 'symlink loop', path: () => 'loop1', refused: 'invalid_resource' },
  { name: 'symlink to itself', path: () => 'self-loop', refused: 'invalid_resource' },
  { name: 'loop in a middle component', path: () => 'loop1/x', refused: 'invalid_resource' },
  { name: 'NFD twin of an NFC folder', path: () => 'cafe\u0301/f.txt', refused: 'invalid_resource' },
  { name: 'NUL in the name', path: () => 'a.txt\u0000.png', refused: 'invalid_resource' },
  { name: 'empty path', path: () => '', refused: 'invalid_resource' },
  { name: 'component below a file', path: () => 'a.txt/../../secret/s.txt', refused: 'invalid_resource' },
  { name: 'percent-escaped dots (a literal name with %)', path: () => '%2e%2e/secret/s.txt', refused: 'invalid_resource' },
  { name: 'backslashes (a literal name)', path: () => '..\\secret\\s.txt', refused: 'invalid_resource' },
  { name: 'full-width dots and slash (a literal name)', path: () => '\uff0e\uff0e\uff0fsecret', refused: 'invalid_resource' },
  { name: 'path longer than PATH_MAX', path: () => `${'d/'.repeat(2_100)}x`, refused: 'invalid_resource' },
];

interface Legit {
  readonly name: string;
  readonly path: (t: FsTree) => string;
  /** The real file (relative to allowed/) it must act on. */
  readonly real: string;
}
const existing: readonly Legit[] = [
  { name: 'plain file', path: () => 'a.txt', real: 'a.txt' },
  { name: 'nested file', path: () => 'sub/b.txt', real: 'sub/b.txt' },
  { name: 'doubled slash', path: () => 'sub//b.txt', real: 'sub/b.txt' },
  { name: 'dot segments', path: () => './sub/./b.txt', real: 'sub/b.txt' },
  { name: '.. that stays inside', path: () => 'sub/deeper/../b.txt', real: 'sub/b.txt' },
  { name: 'symlink to a file inside', path: () => 'link-inside', real: 'sub/b.txt' },
  { name: 'symlink to a folder inside', path: () => 'dirlink-inside/b.txt', real: 'sub/b.txt' },
  { name: 'absolute symlink inside', path: () => 'abs-inside', real: 'a.txt' },
  { name: 'chain of symlinks inside', path: () => 'chain1', real: 'a.txt' },
  { name: 'absolute path', path: (t) => `${t.allowed}/a.txt`, real: 'a.txt' },
  { name: 'the granted folder reached through a symlink', path: (t) => join(t.root, 'alias/a.txt'), real: 'a.txt' },
  { name: 'out through a symlink and back in with ..', path: () => 'esc-dir/../allowed/a.txt', real: 'a.txt' },
  { name: 'NFC name', path: () => 'café/f.txt', real: 'café/f.txt' },
  { name: 'trailing space kept', path: () => 'trail ', real: 'trail ' },
  { name: 'no trailing space is another file', path: () => 'trail', real: 'trail' },
  { name: 'quote in the name', path: () => "quote'", real: "quote'" },
];
const created: readonly Legit[] = [
  { name: 'new file', path: () => 'new.txt', real: 'new.txt' },
  { name: 'new file in a sub folder', path: () => 'sub/new.txt', real: 'sub/new.txt' },
  { name: 'new file through a folder symlink inside', path: () => 'dirlink-inside/new2.txt', real: 'sub/new2.txt' },
  { name: 'new file with a trailing space', path: () => 'new ', real: 'new ' },
  { name: 'new NFC name', path: () => 'nouveau-é.txt', real: 'nouveau-é.txt' },
];
const folders: readonly Legit[] = [
  { name: 'the granted folder itself', path: () => '.', real: '' },
  { name: 'sub folder', path: () => 'sub', real: 'sub' },
  { name: 'folder symlink inside', path: () => 'dirlink-inside', real: 'sub' },
  { name: 'folder via ..', path: () => 'sub/deeper/..', real: 'sub' },
  { name: 'NFC folder', path: () => 'café', real: 'café' },
];

let ledger: Ledger;
let tree: FsTree;
let token: string;
const pathSchema = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
const base = (): string => tree.allowed;

beforeAll(async () => {
  ledger = createLedger();
  const one = (path: string): string[] => [fsResource(path, { base: base() })];
  await ledger.registerTool<{ path: string }>({
    name: 'fs.read',
    inputSchema: pathSchema,
    resources: (args) => one(args.path),
    run: async (args, ctx) => {
      const handle = await ctx.open(args.path, 'r');
      try {
        return await handle.readFile('utf8');
      } finally {
        await handle.close();
      }
    },
  });
  await ledger.registerTool<{ path: string }>({ name: 'fs.list', inputSchema: pathSchema, resources: (args) => one(args.path), run: (args, ctx) => ctx.readdir(args.path) });
  await ledger.registerTool<{ path: string }>({ name: 'fs.write', inputSchema: pathSchema, resources: (args) => one(args.path), run: (args, ctx) => ctx.writeFile(args.path, 'W') });
  await ledger.registerTool<{ path: string }>({
    name: 'fs.create',
    inputSchema: pathSchema,
    resources: (args) => one(args.path),
    run: async (args, ctx) => {
      const handle = await ctx.open(args.path, 'wx');
      await handle.writeFile('N');
      await handle.close();
    },
  });
  await ledger.registerTool<{ from: string; to: string }>({
    name: 'fs.rename',
    inputSchema: { type: 'object', properties: { from: { type: 'string' }, to: { type: 'string' } }, required: ['from', 'to'] },
    resources: (args) => [...one(args.from), ...one(args.to)],
    run: (args, ctx) => ctx.rename(args.from, args.to),
  });
});
afterAll(() => ledger.close());

async function freshTree(): Promise<Record<string, string>> {
  tree?.remove();
  tree = buildFsTree();
  // The folder's scope alone: it covers the folder itself (listed as '.') and what is below it.
  ({ token } = await ledger.issue({
    tools: ['fs.read', 'fs.list', 'fs.write', 'fs.create', 'fs.rename'],
    resources: [fsScope(tree.allowed)],
    expiresAt: Date.now() + 600_000,
    budget: { calls: 100, inputBytes: 100_000 },
  }));
  return tree.outside();
}
afterAll(() => tree?.remove());

const completed = (outcome: InvokeOutcome): unknown => {
  if (outcome.status !== 'completed') throw new Error(`expected completed, got ${outcome.status} ${outcome.status === 'rejected' ? outcome.reason : String((outcome as { error?: unknown }).error)}`);
  return outcome.value;
};

describe('fs escape corpus: 0 escapes across read, list, write, create and rename', () => {
  const operations = [
    { op: 'read', call: (p: string) => ledger.invoke(token, 'fs.read', { path: p }) },
    { op: 'list', call: (p: string) => ledger.invoke(token, 'fs.list', { path: p }) },
    { op: 'write', call: (p: string) => ledger.invoke(token, 'fs.write', { path: p }) },
    { op: 'create', call: (p: string) => ledger.invoke(token, 'fs.create', { path: p }) },
    { op: 'rename (escape as source)', call: (p: string) => ledger.invoke(token, 'fs.rename', { from: p, to: 'renamed.txt' }) },
    { op: 'rename (escape as destination)', call: (p: string) => ledger.invoke(token, 'fs.rename', { from: 'a.txt', to: p }) },
  ];
  it('has at least 30 vectors', () => expect(escapeVectors.length).toBeGreaterThanOrEqual(30));

  describe.each(operations)('$op', ({ call }) => {
    it.each(escapeVectors.map((v) => [v.name, v] as const))('refuses %s', async (_name, vector) => {
      const before = await freshTree();
      const outcome = await call(vector.path(tree));
      expect(outcome).toEqual(expect.objectContaining({ status: 'rejected', reason: vector.refused }));
      expect(tree.outside()).toEqual(before);
      expect(existsSync(join(tree.allowed, 'renamed.txt'))).toBe(false);
    });
  });
});

describe('fs corpus: 0 false refusals of legitimate paths', () => {
  it.each(existing.map((l) => [l.name, l] as const))('reads %s', async (_name, legit) => {
    await freshTree();
    const expected = readFileSync(join(tree.allowed, legit.real), 'utf8');
    expect(completed(await ledger.invoke(token, 'fs.read', { path: legit.path(tree) }))).toBe(expected);
  });

  it.each(folders.map((l) => [l.name, l] as const))('lists %s', async (_name, legit) => {
    await freshTree();
    const names = completed(await ledger.invoke(token, 'fs.list', { path: legit.path(tree) })) as string[];
    expect(names.sort()).toEqual((await import('node:fs')).readdirSync(join(tree.allowed, legit.real)).sort());
  });

  it.each([...existing, ...created].map((l) => [l.name, l] as const))('writes %s', async (_name, legit) => {
    const before = await freshTree();
    completed(await ledger.invoke(token, 'fs.write', { path: legit.path(tree) }));
    expect(readFileSync(join(tree.allowed, legit.real), 'utf8')).toBe('W');
    expect(tree.outside()).toEqual(before);
  });

  it.each(created.map((l) => [l.name, l] as const))('creates %s', async (_name, legit) => {
    await freshTree();
    completed(await ledger.invoke(token, 'fs.create', { path: legit.path(tree) }));
    expect(readFileSync(join(tree.allowed, legit.real), 'utf8')).toBe('N');
  });

  it.each(existing.map((l) => [l.name, l] as const))('renames %s to a new name and back', async (_name, legit) => {
    await freshTree();
    const content = readFileSync(join(tree.allowed, legit.real), 'utf8');
    completed(await ledger.invoke(token, 'fs.rename', { from: legit.path(tree), to: 'sub/moved.txt' }));
    expect(readFileSync(join(tree.allowed, 'sub/moved.txt'), 'utf8')).toBe(content);
    expect(existsSync(join(tree.allowed, legit.real))).toBe(false);
  });

  it('refuses a helper call on a path the call did not check (another file inside the scope)', async () => {
    await freshTree();
    await ledger.registerTool<{ path: string }>({
      name: 'fs.sneaky',
      inputSchema: pathSchema,
      resources: (args) => [fsResource(args.path, { base: base() })],
      run: (_args, ctx) => ctx.open('sub/b.txt', 'r'),
    });
    const { token: sneaky } = await ledger.issue({ tools: ['fs.sneaky'], resources: [fsScope(tree.allowed)], expiresAt: Date.now() + 60_000, budget: { calls: 1, inputBytes: 1_000 } });
    const outcome = await ledger.invoke(sneaky, 'fs.sneaky', { path: 'a.txt' });
    expect(outcome.status).toBe('failed');
    expect((outcome as { error: unknown }).error).toBeInstanceOf(ResourceRefusedError);
    expect((outcome as { error: ResourceRefusedError }).error.code).toBe('invalid_resource'); // relative and never checked: no base to resolve it against
  });
});

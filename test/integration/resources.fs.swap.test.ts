import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLedger, fsResource, fsScope, ResourceRefusedError, type Ledger } from '../../src';
import { CheckedFs, type CheckedFsHooks } from '../../src/resources/fs/checkedFs';
import { collectFsChecks } from '../../src/resources/fs/fsChecks';
import { buildFsTree, type FsTree } from '../support/fsTree';

/**
 * A symlink (or another file) swapped in after the check. Two windows, both made deterministic:
 * between admission and the helper (the tool's own code swaps before calling ctx.open), and inside
 * the helper between its own resolution and its open (the `beforeOpen` hook swaps).
 */
let tree: FsTree;
beforeEach(() => {
  tree = buildFsTree();
});
afterEach(() => tree.remove());

const at = (rest: string): string => join(tree.allowed, rest);
const refusedWith = async (promise: Promise<unknown>, code: string): Promise<void> => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ResourceRefusedError);
  expect((error as ResourceRefusedError).code).toBe(code);
};

/** Swaps `allowed/<rest>` for a symlink to the secret file. */
const symlinkOver = (rest: string, target = join(tree.root, 'secret/s.txt')): void => {
  rmSync(at(rest), { recursive: true, force: true });
  symlinkSync(target, at(rest));
};

/** Helpers over the checks `fsResource` made for `paths`, with a hook between check and open. */
function helpersFor(paths: readonly string[], hooks: CheckedFsHooks): CheckedFs {
  const { value, checks } = collectFsChecks(() => paths.map((p) => fsResource(p, { base: tree.allowed })));
  return new CheckedFs(checks, value, hooks);
}

describe('a symlink swapped in between admission and the helper (tool code swaps, then calls ctx)', () => {
  let ledger: Ledger;
  let swap: () => void = () => undefined;
  beforeEach(async () => {
    ledger = createLedger();
    const tool = (name: string, run: (path: string, ctx: Parameters<Parameters<Ledger['registerTool']>[0]['run']>[1]) => Promise<unknown>) =>
      ledger.registerTool<{ path: string }>({
        name,
        inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
        resources: (args) => [fsResource(args.path, { base: tree.allowed })],
        run: async (args, ctx) => {
          swap();
          return run(args.path, ctx);
        },
      });
    await tool('read', async (p, ctx) => (await ctx.open(p, 'r')).readFile('utf8'));
    await tool('write', (p, ctx) => ctx.writeFile(p, 'W'));
    await tool('append', async (p, ctx) => (await ctx.open(p, 'a')).close());
  });
  afterEach(() => ledger.close());

  const call = async (tool: string, path: string): Promise<unknown> => {
    const { token } = await ledger.issue({ tools: [tool], resources: [fsScope(tree.allowed)], expiresAt: Date.now() + 60_000, budget: { calls: 1, inputBytes: 1_000 } });
    const outcome = await ledger.invoke(token, tool, { path });
    if (outcome.status !== 'failed') throw new Error(`expected the helper to refuse, got ${outcome.status}`);
    return outcome.error;
  };

  it.each(['read', 'write', 'append'])('%s: the real location now leads outside: resource_not_permitted, the secret untouched', async (tool) => {
    swap = () => symlinkOver('swap.txt');
    const error = await call(tool, 'swap.txt');
    expect((error as ResourceRefusedError).code).toBe('resource_not_permitted');
    expect(readFileSync(join(tree.root, 'secret/s.txt'), 'utf8')).toBe('SECRET');
  });

  it('read: another regular file renamed over the checked one is not the checked object: resource_changed', async () => {
    swap = () => {
      writeFileSync(at('other.txt'), 'OTHER');
      renameSync(at('other.txt'), at('swap.txt'));
    };
    expect(((await call('read', 'swap.txt')) as ResourceRefusedError).code).toBe('resource_changed');
  });
});

describe('a swap inside the helper, after its check and before its open (hook)', () => {
  it('read: a symlink at the last component is refused by O_NOFOLLOW', async () => {
    const helpers = helpersFor(['swap.txt'], { beforeOpen: () => symlinkOver('swap.txt') });
    await refusedWith(helpers.open('swap.txt', 'r'), 'resource_changed');
  });

  it.each(['r+', 'w', 'a'] as const)('open %s: a symlink at the last component is refused and the secret is unchanged', async (flags) => {
    const helpers = helpersFor(['swap.txt'], { beforeOpen: () => symlinkOver('swap.txt') });
    await refusedWith(helpers.open('swap.txt', flags), 'resource_changed');
    expect(readFileSync(join(tree.root, 'secret/s.txt'), 'utf8')).toBe('SECRET');
  });

  it('create: a symlink put where the new file goes is not followed (nothing is created outside)', async () => {
    const helpers = helpersFor(['fresh.txt'], { beforeOpen: () => symlinkSync(join(tree.root, 'secret/planted.txt'), at('fresh.txt')) });
    // O_EXCL|O_NOFOLLOW: the name is taken (by the symlink), so the create fails as any create would.
    await expect(helpers.open('fresh.txt', 'wx')).rejects.toMatchObject({ code: 'EEXIST' });
    expect(existsSync(join(tree.root, 'secret/planted.txt'))).toBe(false);
  });

  it('writeFile: a symlink swapped in at the name is refused, the secret is unchanged', async () => {
    const helpers = helpersFor(['swap.txt'], { beforeOpen: () => symlinkOver('swap.txt') });
    await refusedWith(helpers.writeFile('swap.txt', 'W'), 'resource_changed');
    expect(readFileSync(join(tree.root, 'secret/s.txt'), 'utf8')).toBe('SECRET');
  });

  it('read: the parent folder swapped for a symlink to a folder outside is refused', async () => {
    const helpers = helpersFor(['sub/b.txt'], {
      beforeOpen: () => {
        renameSync(at('sub'), at('sub-old'));
        mkdirSync(join(tree.root, 'secret/sub'));
        writeFileSync(join(tree.root, 'secret/sub/b.txt'), 'SECRET-B');
        symlinkSync(join(tree.root, 'secret/sub'), at('sub'));
      },
    });
    await refusedWith(helpers.open('sub/b.txt', 'r'), 'resource_changed');
  });

  it('read: a middle component swapped for a symlink to a copy outside is caught by the parent identity', async () => {
    const helpers = helpersFor(['sub/deeper/c.txt'], {
      beforeOpen: () => {
        cpSync(at('sub'), join(tree.root, 'secret/copy'), { recursive: true });
        writeFileSync(join(tree.root, 'secret/copy/deeper/c.txt'), 'SECRET-C');
        renameSync(at('sub'), at('sub-old'));
        symlinkSync(join(tree.root, 'secret/copy'), at('sub'));
      },
    });
    await refusedWith(helpers.open('sub/deeper/c.txt', 'r'), 'resource_changed');
  });

  it('create and writeFile: a middle component swapped outside creates nothing outside', async () => {
    const swapSub = (): void => {
      cpSync(at('sub'), join(tree.root, 'secret/copy'), { recursive: true });
      renameSync(at('sub'), at('sub-old'));
      symlinkSync(join(tree.root, 'secret/copy'), at('sub'));
    };
    await refusedWith(helpersFor(['sub/deeper/new.txt'], { beforeOpen: swapSub }).open('sub/deeper/new.txt', 'wx'), 'resource_changed');
    rmSync(at('sub'));
    rmSync(join(tree.root, 'secret/copy'), { recursive: true });
    renameSync(at('sub-old'), at('sub'));
    await refusedWith(helpersFor(['sub/deeper/new.txt'], { beforeOpen: swapSub }).writeFile('sub/deeper/new.txt', 'W'), 'resource_changed');
    expect(existsSync(join(tree.root, 'secret/copy/deeper/new.txt'))).toBe(false);
  });

  it('readdir: the folder swapped for a symlink to a folder outside is refused', async () => {
    const helpers = helpersFor(['sub'], {
      beforeOpen: () => {
        renameSync(at('sub'), at('sub-old'));
        symlinkSync(join(tree.root, 'secret'), at('sub'));
      },
    });
    await refusedWith(helpers.readdir('sub'), 'resource_changed');
  });

  it('rename: a source swapped for a symlink is refused and nothing moves', async () => {
    const helpers = helpersFor(['swap.txt', 'moved.txt'], { beforeOpen: (real) => (real.endsWith('swap.txt') ? symlinkOver('swap.txt') : undefined) });
    await refusedWith(helpers.rename('swap.txt', 'moved.txt'), 'resource_changed');
    expect(existsSync(at('moved.txt'))).toBe(false);
  });

  it('read: the checked file replaced by another regular file is refused (device and inode compared)', async () => {
    const helpers = helpersFor(['swap.txt'], {
      beforeOpen: () => {
        writeFileSync(at('other.txt'), 'OTHER');
        renameSync(at('other.txt'), at('swap.txt'));
      },
    });
    await refusedWith(helpers.open('swap.txt', 'r'), 'resource_changed');
  });
});

describe('the helpers track what they change themselves', () => {
  it('a file written (new inode by rename) can be read back and renamed in the same call', async () => {
    const helpers = helpersFor(['swap.txt', 'final.txt'], {});
    await helpers.writeFile('swap.txt', 'NEW');
    const handle = await helpers.open('swap.txt', 'r');
    expect(await handle.readFile('utf8')).toBe('NEW');
    await handle.close();
    await helpers.rename('swap.txt', 'final.txt');
    const moved = await helpers.open('final.txt', 'r');
    expect(await moved.readFile('utf8')).toBe('NEW');
    await moved.close();
    await expect(helpers.open('swap.txt', 'r')).rejects.toMatchObject({ code: 'ENOENT' }); // moved away by this call
  });

  it('refuses to open a folder as a file (invalid_resource)', async () => {
    const helpers = helpersFor(['sub'], {});
    await refusedWith(helpers.open('sub', 'r'), 'invalid_resource');
  });
});

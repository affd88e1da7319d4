import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createLedger, fsResource, fsScope, ResourceRefusedError, verify, type Ledger, type ToolContext } from '../../src';
import { buildFsTree, type FsTree } from '../support/fsTree';
import { manualClock, manualTimers } from '../support/fixtures';

/**
 * Issue 30 item 11: a tool that keeps its context must lose its authority when the call ends.
 * `ctx.fetch` already refused after settlement; every other helper (`open`, `readdir`, `writeFile`,
 * `rename`) and `report` must refuse too, once the call has completed, failed, timed out, or been
 * aborted. Nothing on disk may change.
 */
let tree: FsTree;
beforeEach(() => {
  tree = buildFsTree();
});
afterEach(() => tree.remove());

interface Kept {
  ctx: ToolContext | undefined;
  release: () => void;
  /** Resolves with the ctx once the tool runs. */
  started: Promise<ToolContext>;
}

/** A ledger whose `files.touch` tool keeps its ctx and waits until released (at once when `hang` is false). */
async function keepingLedger(options: { hang: boolean; callTimeoutMs?: number }): Promise<{ ledger: Ledger; token: string; kept: Kept; fire: () => void }> {
  const clock = manualClock();
  const timers = manualTimers();
  const ledger = createLedger({ clock: clock.now, setTimer: timers.setTimer });
  let start: (ctx: ToolContext) => void = () => undefined;
  const kept: Kept = { ctx: undefined, release: () => undefined, started: new Promise((resolve) => (start = resolve)) };
  const base = tree.allowed;
  await ledger.registerTool<{ paths: string[] }>({
    name: 'files.touch',
    inputSchema: { type: 'object', properties: { paths: { type: 'array', items: { type: 'string' } } }, required: ['paths'] },
    resources: (args) => args.paths.map((p) => fsResource(p, { base })),
    cost: () => ({ usd_micros: 100 }),
    run: async (_args, ctx) => {
      kept.ctx = ctx;
      start(ctx);
      if (options.hang) await new Promise<void>((resolve) => (kept.release = resolve));
      return 'ok';
    },
  });
  const { token } = await ledger.issue({
    tools: ['files.touch'],
    resources: [fsScope(tree.allowed)],
    expiresAt: clock.now() + 3_600_000,
    budget: { calls: 10, inputBytes: 10_000, meters: { usd_micros: 10_000 } },
    ...(options.callTimeoutMs !== undefined ? { callTimeoutMs: options.callTimeoutMs } : {}),
  });
  return {
    ledger,
    token,
    kept,
    fire: () => {
      clock.advance(options.callTimeoutMs ?? 0);
      timers.fire();
    },
  };
}

const paths = ['a.txt', 'new.txt', 'sub', 'sub/b.txt', 'sub/moved.txt'];

/** Every helper of a kept context, each as a refusal code or what it did. */
async function tryEveryHelper(ctx: ToolContext): Promise<Record<string, string>> {
  const attempt = async (run: () => Promise<unknown> | unknown): Promise<string> => {
    try {
      await run();
      return 'acted';
    } catch (error) {
      if (error instanceof ResourceRefusedError) return error.code;
      return `threw ${(error as Error)?.name ?? String(error)}`;
    }
  };
  return {
    'open r': await attempt(async () => (await ctx.open('a.txt', 'r')).close()),
    'open wx': await attempt(async () => (await ctx.open('new.txt', 'wx')).close()),
    'open w': await attempt(async () => (await ctx.open('a.txt', 'w')).close()),
    readdir: await attempt(() => ctx.readdir('sub')),
    writeFile: await attempt(() => ctx.writeFile('a.txt', 'AFTER')),
    rename: await attempt(() => ctx.rename('sub/b.txt', 'sub/moved.txt')),
    report: await attempt(() => ctx.report({ usd_micros: 0 })),
    fetch: await attempt(() => ctx.fetch('http://127.0.0.1:9/x')),
  };
}

function expectUntouched(): void {
  expect(readFileSync(join(tree.allowed, 'a.txt'), 'utf8')).toBe('A');
  expect(existsSync(join(tree.allowed, 'new.txt'))).toBe(false);
  expect(readFileSync(join(tree.allowed, 'sub/b.txt'), 'utf8')).toBe('B');
  expect(existsSync(join(tree.allowed, 'sub/moved.txt'))).toBe(false);
  expect(readdirSync(tree.allowed).filter((n) => n.startsWith('.atc-'))).toEqual([]);
}

const refusedAll = (code: string): Record<string, string> => ({ 'open r': code, 'open wx': code, 'open w': code, readdir: code, writeFile: code, rename: code, report: code, fetch: code });

describe('a kept ctx after the call ended', () => {
  it('refuses every helper and report once the call completed', async () => {
    const { ledger, token, kept } = await keepingLedger({ hang: false });
    expect(await ledger.invoke(token, 'files.touch', { paths })).toMatchObject({ status: 'completed' });
    expect(await tryEveryHelper(kept.ctx as ToolContext)).toEqual(refusedAll('call_not_running'));
    expectUntouched();
    expect(verify(ledger.events()).ok).toBe(true);
    await ledger.close();
  });

  it('refuses every helper and report once the call timed out, even while the tool still runs', async () => {
    const { ledger, token, kept, fire } = await keepingLedger({ hang: true, callTimeoutMs: 1_000 });
    const pending = ledger.invoke(token, 'files.touch', { paths });
    const ctx = await kept.started;
    fire();
    expect(await pending).toMatchObject({ status: 'failed', error: expect.objectContaining({ name: 'TimeoutError' }) });
    expect(await tryEveryHelper(ctx)).toEqual(refusedAll('call_not_running'));
    kept.release();
    expectUntouched();
    expect(verify(ledger.events()).ok).toBe(true);
    await ledger.close();
  });
});

describe('a running call whose signal was aborted', () => {
  it('refuses every file helper with the abort reason, as ctx.fetch does; report still counts until it ends', async () => {
    const { ledger, token, kept } = await keepingLedger({ hang: true });
    const cancel = new AbortController();
    const pending = ledger.invoke(token, 'files.touch', { paths }, { signal: cancel.signal });
    const ctx = await kept.started;
    cancel.abort(new DOMException('stop', 'AbortError'));
    const tried = await tryEveryHelper(ctx);
    expect(tried).toEqual({ 'open r': 'threw AbortError', 'open wx': 'threw AbortError', 'open w': 'threw AbortError', readdir: 'threw AbortError', writeFile: 'threw AbortError', rename: 'threw AbortError', report: 'acted', fetch: 'threw AbortError' });
    kept.release();
    expect(await pending).toMatchObject({ status: 'completed' });
    expectUntouched();
    expect(verify(ledger.events()).ok).toBe(true);
    await ledger.close();
  });
});

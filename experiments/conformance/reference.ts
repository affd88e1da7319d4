// The suite's reference server (`everything-server.ts` of @modelcontextprotocol/conformance's
// repository, which its npm package does not ship): found on disk, bundled with esbuild, started on
// a free loopback port.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export const referenceFile = 'everything-server.ts';

/**
 * The directory holding the reference server: `--reference`, else ATC_CONFORMANCE_REFERENCE, else
 * ../shared/mcp-conformance next to the repository (or next to its main worktree, when this is a
 * linked one).
 */
export function referenceDir(root: string, given: string | undefined): string {
  const chosen = given ?? process.env.ATC_CONFORMANCE_REFERENCE;
  if (chosen !== undefined) return path.resolve(root, chosen);
  const beside = (repo: string): string => path.resolve(repo, '../shared/mcp-conformance');
  if (hasReference(beside(root))) return beside(root);
  const main = mainWorktree(root);
  return main !== undefined && hasReference(beside(main)) ? beside(main) : beside(root);
}

function mainWorktree(root: string): string | undefined {
  try {
    const common = execFileSync('git', ['rev-parse', '--path-format=absolute', '--git-common-dir'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return path.dirname(common);
  } catch {
    return undefined;
  }
}

export function hasReference(dir: string): boolean {
  return existsSync(path.join(dir, referenceFile));
}

/**
 * Bundles the reference server into `outDir`. Its dependencies stay external and resolve from this
 * repository's node_modules (the MCP SDK brings express 5 and cors); it imports `zod` 4, which
 * the project's zod 3.25 package carries as `zod/v4`, so the import is aliased to that.
 */
export async function buildReference(dir: string, outDir: string): Promise<string> {
  const esbuild = await import('esbuild');
  mkdirSync(outDir, { recursive: true });
  const outfile = path.join(outDir, 'everything-server.mjs');
  await esbuild.build({ entryPoints: [path.join(dir, referenceFile)], bundle: true, platform: 'node', format: 'esm', packages: 'external', alias: { zod: 'zod/v4' }, outfile, logLevel: 'error' });
  return outfile;
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface RunningReference {
  readonly url: string;
  stop(): void;
}

/** Starts the bundled server (it takes its port from PORT and says when it listens) with this Node. */
export async function startReference(bundle: string, node: string = process.execPath, timeoutMs = 20_000): Promise<RunningReference> {
  const port = await freePort();
  const child: ChildProcess = spawn(node, [bundle], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('the reference server did not start')), timeoutMs);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (out.includes('running on')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the reference server exited (${code})`));
    });
  });
  child.stdout?.resume();
  return { url: `http://localhost:${port}/mcp`, stop: () => void child.kill() };
}

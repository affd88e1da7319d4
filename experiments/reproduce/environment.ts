import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Hardware } from '../../src/evidence/types';
import { createHash } from 'node:crypto';

/** What is hashed into `sourceHashes`: everything that decides what the experiment runs. */
export const sourceRoots = ['src', 'experiments', 'migrations'] as const;
export const sourceFiles = ['package.json', 'package-lock.json', 'tsconfig.json'] as const;

/** The package root: the nearest directory above this file holding our package.json. */
export function packageRoot(from: string = __dirname): string {
  let dir = from;
  for (;;) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'agent-tool-capabilities') return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('cannot find the agent-tool-capabilities package root');
    dir = parent;
  }
}

function git(root: string, args: readonly string[]): string | null {
  try {
    return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return null;
  }
}

/**
 * The git commit and whether the tree has local changes (untracked files count). Both null when
 * git is missing or the package is not the root of its own repository (e.g. installed from npm).
 */
export function revisionOf(root: string): { commit: string | null; dirty: boolean | null } {
  const top = git(root, ['rev-parse', '--show-toplevel']);
  if (top === null || path.resolve(top.trim()) !== path.resolve(root)) return { commit: null, dirty: null };
  const commit = git(root, ['rev-parse', 'HEAD']);
  const status = git(root, ['status', '--porcelain']);
  return { commit: commit === null ? null : commit.trim(), dirty: status === null ? null : status.trim() !== '' };
}

function walk(root: string, relative: string, out: string[]): void {
  const absolute = path.join(root, relative);
  if (!existsSync(absolute)) return;
  if (statSync(absolute).isFile()) {
    out.push(relative);
    return;
  }
  for (const name of readdirSync(absolute).sort()) walk(root, path.posix.join(relative, name), out);
}

/** SHA-256 of each source file's bytes, keyed by its path relative to the package root (with '/'). */
export function sourceHashesOf(root: string): Record<string, string> {
  const files: string[] = [];
  for (const dir of sourceRoots) walk(root, dir, files);
  for (const file of sourceFiles) walk(root, file, files);
  const hashes: Record<string, string> = {};
  for (const file of files.sort()) hashes[file] = createHash('sha256').update(readFileSync(path.join(root, file))).digest('hex');
  return hashes;
}

export function hardwareOf(): Hardware {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cpuCount: cpus.length,
    memoryBytes: os.totalmem(),
    node: process.version,
    os: { platform: process.platform, release: os.release(), arch: process.arch },
  };
}

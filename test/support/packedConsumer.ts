import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { packageRoot } from './consumerProject';

/**
 * A consumer project made as a user makes one, from the packed tarball (`npm pack`), installed by
 * npm itself, offline. npm cannot resolve registry names offline without their metadata, so the
 * project gets a lockfile: the package's own runtime closure taken from our package-lock.json (the
 * versions a user would get today), plus `extra` packages (typescript, @types/node, ai). Install
 * scripts are skipped: nothing here opens a SQLite file, so better-sqlite3's addon is not built.
 */
export interface PackedConsumer {
  readonly dir: string;
  readonly tarball: string;
  run(command: string, args: readonly string[], env?: NodeJS.ProcessEnv): { status: number | null; stdout: string; stderr: string };
  remove(): void;
}

interface LockEntry {
  readonly version?: string;
  readonly dev?: boolean;
  readonly dependencies?: Record<string, string>;
  readonly optionalDependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
  readonly [key: string]: unknown;
}

/** Where npm placed `name` for a package at `from` (its own node_modules, then up). */
function resolveIn(packages: Record<string, LockEntry>, from: string, name: string): string | undefined {
  let base = from;
  for (;;) {
    const candidate = `${base === '' ? '' : `${base}/`}node_modules/${name}`;
    if (packages[candidate] !== undefined) return candidate;
    if (base === '') return undefined;
    const cut = base.lastIndexOf('/node_modules/');
    base = cut < 0 ? '' : base.slice(0, cut);
  }
}

/** `roots` and everything they depend on, as lockfile keys. */
function closure(packages: Record<string, LockEntry>, roots: readonly string[]): Set<string> {
  const seen = new Set<string>();
  const queue = [...roots];
  while (queue.length > 0) {
    const key = queue.pop() as string;
    if (seen.has(key)) continue;
    seen.add(key);
    const entry = packages[key] as LockEntry;
    for (const name of Object.keys({ ...entry.dependencies, ...entry.optionalDependencies })) {
      const at = resolveIn(packages, key, name);
      if (at !== undefined) queue.push(at);
    }
  }
  return seen;
}

export function makePackedConsumer(extra: readonly string[]): PackedConsumer {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'atc-packed-'));
  const tarballName = execFileSync('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: packageRoot, encoding: 'utf8' }).trim().split('\n').at(-1) as string;
  const tarball = path.join(dir, tarballName);
  const lock = JSON.parse(fs.readFileSync(path.join(packageRoot, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  const own = lock.packages[''] as LockEntry;
  const roots = [...Object.keys(own.dependencies ?? {}), ...extra].map((name) => `node_modules/${name}`);
  const packages: Record<string, LockEntry> = {};
  for (const key of closure(lock.packages, roots)) {
    const { dev: _dev, devOptional: _devOptional, peer: _peer, ...entry } = lock.packages[key] as LockEntry;
    packages[key] = entry;
  }
  const manifest = JSON.parse(execFileSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' })) as Record<string, unknown>;
  const integrity = `sha512-${createHash('sha512').update(fs.readFileSync(tarball)).digest('base64')}`;
  const dependencies: Record<string, string> = { 'agent-tool-capabilities': `file:${tarballName}` };
  for (const name of extra) dependencies[name] = (lock.packages[`node_modules/${name}`] as LockEntry).version as string;
  packages['node_modules/agent-tool-capabilities'] = { version: manifest.version as string, resolved: `file:${tarballName}`, integrity, dependencies: manifest.dependencies as Record<string, string>, bin: manifest.bin, engines: manifest.engines, peerDependencies: manifest.peerDependencies as Record<string, string>, peerDependenciesMeta: manifest.peerDependenciesMeta };
  packages[''] = { name: 'consumer', version: '1.0.0', dependencies };
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, dependencies }, null, 2));
  fs.writeFileSync(path.join(dir, 'package-lock.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', lockfileVersion: 3, requires: true, packages }, null, 2));
  execFileSync('npm', ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return {
    dir,
    tarball,
    run: (command, args, env = {}) => spawnSync(command, [...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, npm_config_offline: 'true', ...env } }),
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

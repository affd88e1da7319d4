import { lstatSync, readlinkSync, type BigIntStats } from 'node:fs';
import { isCanonicalResource } from '../../domain/resources';
import { ResourceRefusedError } from '../resourceRefusedError';

/** Which object a path led to when it was resolved: compared again when a helper opens it. */
export interface FsIdentity {
  readonly dev: bigint;
  readonly ino: bigint;
  readonly kind: 'file' | 'directory' | 'other';
}

export interface RealLocation {
  /** The canonical resource of the real location: `fs:/srv/data/a` (`fs:/` for the root). */
  readonly resource: string;
  /** The real path (no symlink in any component, no `.` or `..`). */
  readonly realPath: string;
  /** The object there; undefined when nothing exists there yet. */
  readonly target: FsIdentity | undefined;
  /** The directory holding it; undefined when that does not exist either (or for the root). */
  readonly parent: FsIdentity | undefined;
}

/** Symlinks followed in one resolution (Linux's MAXSYMLINKS); more is a loop. */
export const symlinksMax = 40;
/** Bytes of a path to resolve (Linux's PATH_MAX). */
export const pathBytesMax = 4_096;

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const invalid = (): ResourceRefusedError => new ResourceRefusedError('invalid_resource');

function identityOf(stats: BigIntStats): FsIdentity {
  return { dev: stats.dev, ino: stats.ino, kind: stats.isFile() ? 'file' : stats.isDirectory() ? 'directory' : 'other' };
}

export function sameObject(a: FsIdentity, b: FsIdentity): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

function lstatOrMissing(path: string): BigIntStats | undefined {
  try {
    return lstatSync(path, { bigint: true, throwIfNoEntry: false });
  } catch {
    throw invalid(); // EACCES, ENAMETOOLONG, ENOTDIR…: the path cannot be resolved
  }
}

function readLinkText(path: string): string {
  try {
    // As bytes: a target that is not UTF-8 would otherwise decode lossily and alias another name.
    return strictUtf8.decode(readlinkSync(path, { encoding: 'buffer' }));
  } catch {
    throw invalid();
  }
}

const joined = (segments: readonly string[]): string => `/${segments.join('/')}`;

/**
 * Resolves `path` the way the kernel does, by hand: each component is looked up with lstat, a
 * symlink's target replaces it (absolute targets restart at the root; a later `..` applies to the
 * target's directory, since what has been resolved so far holds no symlink), and a path that does
 * not exist yet is resolved through its deepest existing directory. Refuses (`invalid_resource`)
 * NUL, a dangling symlink, a loop, `..` or `.` below a missing directory, a component below a
 * file, a target that is not UTF-8, and a real path whose resource is not canonical (a name that
 * is not NFC, holds `%`, `\`, a control character…): such names are refused, never rewritten.
 */
export function resolveRealPath(path: string, base: string | undefined): RealLocation {
  if (typeof path !== 'string' || path === '' || path.includes('\u0000') || Buffer.byteLength(path) > pathBytesMax) throw invalid();
  const done: string[] = [];
  const dirs: FsIdentity[] = [];
  const root = lstatOrMissing('/');
  if (root === undefined) throw invalid();
  const rootIdentity = identityOf(root);
  if (!path.startsWith('/')) {
    if (base === undefined) throw invalid();
    const baseLocation = resolveBase(base);
    done.push(...baseLocation.segments);
    dirs.push(...baseLocation.dirs);
  }
  // A stack of what is left to resolve: the top is the next component.
  const pending: { readonly name: string; readonly fromLink: boolean }[] = [];
  const pushComponents = (text: string, fromLink: boolean): void => {
    const parts = text.split('/').filter((part) => part !== '');
    for (let i = parts.length - 1; i >= 0; i--) pending.push({ name: parts[i] as string, fromLink });
  };
  pushComponents(path, false);
  const mustBeDirectory = /\/\.{0,2}$/.test(path);
  let links = 0;
  while (pending.length > 0) {
    const next = pending.pop() as { name: string; fromLink: boolean };
    if (next.name === '.') continue;
    if (next.name === '..') {
      done.pop();
      dirs.pop();
      continue;
    }
    const candidate = joined([...done, next.name]);
    const stats = lstatOrMissing(candidate);
    if (stats === undefined) {
      // Nothing there: a dangling symlink is refused; a new path keeps its remaining names as given.
      if (next.fromLink) throw invalid();
      const rest = [next, ...pending.reverse()];
      if (rest.some((part) => part.name === '.' || part.name === '..')) throw invalid();
      done.push(...rest.map((part) => part.name));
      const parent = rest.length === 1 ? dirs[dirs.length - 1] ?? rootIdentity : undefined;
      return location(done, undefined, parent);
    }
    if (stats.isSymbolicLink()) {
      if (++links > symlinksMax) throw invalid();
      const text = readLinkText(candidate);
      if (text === '' || text.includes('\u0000')) throw invalid();
      if (text.startsWith('/')) {
        done.length = 0;
        dirs.length = 0;
      }
      pushComponents(text, true);
      continue;
    }
    const identity = identityOf(stats);
    if (identity.kind !== 'directory' && (pending.length > 0 || mustBeDirectory)) throw invalid(); // ENOTDIR
    done.push(next.name);
    dirs.push(identity);
  }
  if (done.length === 0) return location(done, rootIdentity, undefined);
  return location(done, dirs[dirs.length - 1] as FsIdentity, dirs[dirs.length - 2] ?? rootIdentity);
}

function location(segments: readonly string[], target: FsIdentity | undefined, parent: FsIdentity | undefined): RealLocation {
  const resource = `fs:/${segments.join('/')}`;
  if (!isCanonicalResource(resource)) throw invalid();
  return { resource, realPath: joined(segments), target, parent };
}

/** A base directory, resolved like any path (it is the host's, so a bad one is a TypeError). */
function resolveBase(base: string): { segments: string[]; dirs: FsIdentity[] } {
  if (typeof base !== 'string' || !base.startsWith('/')) throw new TypeError('base must be an absolute directory path');
  let resolved: RealLocation;
  try {
    resolved = resolveRealPath(base, undefined);
  } catch {
    throw new TypeError('base must be an existing directory whose real path is canonical');
  }
  if (resolved.target?.kind !== 'directory') throw new TypeError('base must be an existing directory');
  const segments = resolved.realPath === '/' ? [] : resolved.realPath.slice(1).split('/');
  // Identities of the base's own directories, for `parent` when a path names a direct child of one.
  const dirs = segments.map((_, i) => identityOf(lstatSync(joined(segments.slice(0, i + 1)), { bigint: true })));
  return { segments, dirs };
}

import { constants, existsSync } from 'node:fs';
import { lstat, open, readdir, rename, unlink, type FileHandle } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import type { CheckedOpenFlags } from '../../stream/ports/toolResources';
import { ResourceRefusedError } from '../resourceRefusedError';
import type { FsCheck } from './fsChecks';
import { resolveRealPath, sameObject, type FsIdentity, type RealLocation } from './realPath';

export type { CheckedOpenFlags };

const { O_RDONLY, O_WRONLY, O_RDWR, O_CREAT, O_EXCL, O_APPEND, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = constants;
const openFlags: Readonly<Record<CheckedOpenFlags, number>> = {
  r: O_RDONLY,
  'r+': O_RDWR,
  w: O_WRONLY | O_CREAT,
  wx: O_WRONLY | O_CREAT | O_EXCL,
  a: O_WRONLY | O_CREAT | O_APPEND,
};

/**
 * On Linux, `/proc/self/fd/N/name` looks `name` up in the directory open as N, whatever its path
 * leads to now: with it every operation below acts inside the directory whose identity was
 * compared (what openat/renameat do). Elsewhere the real path is used and a swap of a parent
 * directory between the comparison and the operation is not caught (docs/resources.md).
 */
const fdPaths = existsSync('/proc/self/fd');

/** Points in a helper's work where tests swap files in, to show that the swap is caught. */
export interface CheckedFsHooks {
  /** After the path was resolved and compared with the check, before anything is opened. */
  readonly beforeOpen?: (realPath: string) => void | Promise<void>;
}

const refuse = (code: 'invalid_resource' | 'resource_not_permitted' | 'resource_changed'): ResourceRefusedError => new ResourceRefusedError(code);

async function statIdentity(handle: FileHandle): Promise<FsIdentity> {
  const stats = await handle.stat({ bigint: true });
  return { dev: stats.dev, ino: stats.ino, kind: stats.isFile() ? 'file' : stats.isDirectory() ? 'directory' : 'other' };
}

/** `a` unset means "not known to exist": only a known identity can differ. */
const differs = (expected: FsIdentity | undefined, actual: FsIdentity | undefined): boolean => expected !== undefined && actual !== undefined && !sameObject(expected, actual);

const isLoop = (error: unknown): boolean => (error as { code?: unknown })?.code === 'ELOOP' || (error as { code?: unknown })?.code === 'ENOTDIR';

/**
 * The file helpers a tool gets on its context: each resolves the path again, requires its real
 * location to be one of the call's checked resources, compares what is there with what was checked
 * (device and inode), then opens with O_NOFOLLOW inside the compared parent directory and compares
 * the opened object once more. Identities the helpers themselves change (a write, a rename) are
 * tracked, so a tool may read back what it wrote.
 */
export class CheckedFs {
  private readonly expected = new Map<string, { target: FsIdentity | undefined; parent: FsIdentity | undefined }>();

  constructor(
    private readonly checks: readonly FsCheck[],
    private readonly resources: readonly string[],
    private readonly hooks: CheckedFsHooks = {},
    /** Throws once the call may no longer act: checked on entry and again right before each effect. */
    private readonly live: () => void = () => undefined,
  ) {
    for (const check of checks) if (!this.expected.has(check.resource)) this.expected.set(check.resource, { target: check.target, parent: check.parent });
  }

  async open(path: string, flags: CheckedOpenFlags = 'r'): Promise<FileHandle> {
    this.live();
    if (typeof flags !== 'string' || !Object.prototype.hasOwnProperty.call(openFlags, flags)) throw new TypeError("flags must be one of 'r', 'r+', 'w', 'wx', 'a'");
    const creates = flags !== 'r' && flags !== 'r+';
    const place = await this.locate(path, creates ? 'may-create' : 'existing');
    const { dir, name } = await this.pinParent(place);
    try {
      let handle: FileHandle;
      try {
        this.live();
        handle = await open(childPath(dir, place, name), openFlags[flags] | O_NOFOLLOW | O_NONBLOCK, 0o666);
      } catch (error) {
        if (isLoop(error)) throw refuse('resource_changed'); // a symlink now sits where the checked object was
        throw error;
      }
      try {
        const opened = await statIdentity(handle);
        if (opened.kind !== 'file') throw refuse('invalid_resource');
        if (differs(place.expectedTarget, opened)) throw refuse('resource_changed');
        if (flags === 'w') await handle.truncate(0);
        this.expected.set(place.location.resource, { target: opened, parent: place.location.parent });
        return handle;
      } catch (error) {
        await handle.close();
        throw error;
      }
    } finally {
      await dir?.close();
    }
  }

  /** The names in a checked directory (the directory itself must be a checked resource). */
  async readdir(path: string): Promise<string[]> {
    this.live();
    const place = await this.locate(path, 'existing');
    const { dir, name } = await this.pinParent(place);
    try {
      let handle: FileHandle;
      try {
        handle = place.location.realPath === '/' ? await open('/', O_RDONLY | O_DIRECTORY) : await open(childPath(dir, place, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      } catch (error) {
        if (isLoop(error)) throw refuse('resource_changed');
        throw error;
      }
      try {
        if (differs(place.expectedTarget, await statIdentity(handle))) throw refuse('resource_changed');
        this.live();
        return await readdir(fdPaths ? `/proc/self/fd/${handle.fd}` : place.location.realPath);
      } finally {
        await handle.close();
      }
    } finally {
      await dir?.close();
    }
  }

  /** Replaces the file atomically: a new temporary file in the compared directory, renamed over the name (rename follows no link). */
  async writeFile(path: string, data: string | Uint8Array): Promise<void> {
    this.live();
    const place = await this.locate(path, 'may-create');
    const { dir, name } = await this.pinParent(place);
    try {
      const temporary = `.atc-${randomBytes(12).toString('hex')}.tmp`;
      const temporaryPath = childPath(dir, place, temporary);
      const handle = await open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o666);
      let written: FsIdentity;
      try {
        await handle.writeFile(data);
        await handle.sync();
        written = await statIdentity(handle);
      } catch (error) {
        await handle.close();
        await unlink(temporaryPath).catch(() => undefined);
        throw error;
      }
      await handle.close();
      try {
        // What the name holds now must still be the checked object (or nothing): not a symlink swapped in.
        const now = await lstat(childPath(dir, place, name), { bigint: true }).catch(() => undefined);
        if (now !== undefined && (now.isSymbolicLink() || differs(place.expectedTarget, { dev: now.dev, ino: now.ino, kind: 'other' }))) throw refuse('resource_changed');
        this.live();
        await rename(temporaryPath, childPath(dir, place, name));
      } catch (error) {
        await unlink(temporaryPath).catch(() => undefined);
        throw error;
      }
      this.expected.set(place.location.resource, { target: written, parent: place.location.parent });
    } finally {
      await dir?.close();
    }
  }

  /** Renames one checked resource to another; both names are looked up inside their compared directories. */
  async rename(from: string, to: string): Promise<void> {
    this.live();
    const source = await this.locate(from, 'existing');
    const destination = await this.locate(to, 'may-create');
    const pinnedSource = await this.pinParent(source);
    try {
      const pinnedDestination = await this.pinParent(destination);
      try {
        const sourcePath = childPath(pinnedSource.dir, source, pinnedSource.name);
        const now = await lstat(sourcePath, { bigint: true });
        if (now.isSymbolicLink()) throw refuse('resource_changed');
        const moved: FsIdentity = { dev: now.dev, ino: now.ino, kind: now.isFile() ? 'file' : now.isDirectory() ? 'directory' : 'other' };
        if (differs(source.expectedTarget, moved)) throw refuse('resource_changed');
        this.live();
        await rename(sourcePath, childPath(pinnedDestination.dir, destination, pinnedDestination.name));
        this.expected.set(source.location.resource, { target: undefined, parent: source.location.parent });
        this.expected.set(destination.location.resource, { target: moved, parent: destination.location.parent });
      } finally {
        await pinnedDestination.dir?.close();
      }
    } finally {
      await pinnedSource.dir?.close();
    }
  }

  // ---- the checks every helper makes -----------------------------------------------------------

  private async locate(path: string, mode: 'existing' | 'may-create'): Promise<{ location: RealLocation; expectedTarget: FsIdentity | undefined; expectedParent: FsIdentity | undefined }> {
    if (typeof path !== 'string') throw refuse('invalid_resource');
    // A relative path means what it meant when it was checked: the base its check used.
    const base = path.startsWith('/') ? undefined : this.checks.find((check) => check.path === path)?.base;
    if (!path.startsWith('/') && base === undefined) throw refuse('invalid_resource');
    const location = resolveRealPath(path, base);
    if (!this.resources.includes(location.resource)) throw refuse('resource_not_permitted');
    const known = this.expected.get(location.resource);
    const expectedTarget = known?.target;
    const expectedParent = known?.parent;
    if (differs(expectedParent, location.parent) || differs(expectedTarget, location.target)) throw refuse('resource_changed');
    // Checked as existing and gone now: a read is no longer of the checked object.
    if (mode === 'existing' && expectedTarget !== undefined && location.target === undefined) throw refuse('resource_changed');
    await this.hooks.beforeOpen?.(location.realPath);
    return { location, expectedTarget: expectedTarget ?? location.target, expectedParent: expectedParent ?? location.parent };
  }

  /** Opens the parent directory (O_NOFOLLOW on its last component) and compares it with the checked one. */
  private async pinParent(place: { location: RealLocation; expectedParent: FsIdentity | undefined }): Promise<{ dir: FileHandle | undefined; name: string }> {
    const realPath = place.location.realPath;
    if (realPath === '/') return { dir: undefined, name: '' };
    const cut = realPath.lastIndexOf('/');
    const parentPath = cut === 0 ? '/' : realPath.slice(0, cut);
    let dir: FileHandle;
    try {
      dir = await open(parentPath, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    } catch (error) {
      if (isLoop(error)) throw refuse('resource_changed');
      throw error;
    }
    if (differs(place.expectedParent, await statIdentity(dir))) {
      await dir.close();
      throw refuse('resource_changed');
    }
    return { dir, name: realPath.slice(cut + 1) };
  }
}

function childPath(dir: FileHandle | undefined, place: { location: RealLocation }, name: string): string {
  if (dir === undefined) return '/';
  if (fdPaths) return `/proc/self/fd/${dir.fd}/${name}`;
  const realPath = place.location.realPath;
  return `${realPath.slice(0, realPath.lastIndexOf('/') + 1)}${name}`;
}

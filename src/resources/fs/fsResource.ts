import { ResourceRefusedError } from '../resourceRefusedError';
import { noteFsCheck } from './fsChecks';
import { resolveRealPath } from './realPath';

export interface FsResourceOptions {
  /** Directory a relative path is resolved against (symlinks in it resolved too). Without it a relative path is refused. */
  readonly base?: string;
}

/**
 * The canonical `fs:` resource of where `path` really leads (see realPath.ts): `fs:/srv/data/a`.
 * Synchronous. Throws `ResourceRefusedError('invalid_resource')` for a path that cannot be resolved
 * (inside a tool's `resources(args)` that makes the call `invalid_resource`).
 */
export function fsResource(path: string, options: FsResourceOptions = {}): string {
  const location = resolveRealPath(path, options.base);
  noteFsCheck({ ...location, path, base: options.base });
  return location.resource;
}

/** The scope of a real directory: `fs:/srv/data/` (the folder and what is below it), `fs:/` for the root. */
export function fsScope(dir: string): string {
  if (typeof dir !== 'string' || !dir.startsWith('/')) throw new TypeError('fsScope needs an absolute directory path');
  let location;
  try {
    location = resolveRealPath(dir, undefined);
  } catch (error) {
    if (error instanceof ResourceRefusedError) throw new TypeError('fsScope needs an existing directory whose real path is canonical');
    throw error;
  }
  if (location.target?.kind !== 'directory') throw new TypeError('fsScope needs an existing directory');
  return location.resource === 'fs:/' ? 'fs:/' : `${location.resource}/`;
}

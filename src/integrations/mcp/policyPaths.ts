import { existsSync } from 'node:fs';
import { fsScope } from '../../resources/fs/fsResource';
import { PolicyError, type Policy } from './policy';

/**
 * Checks a policy's paths against the disk, since the proxy resolves `fs:` arguments to where they
 * really lead: `fsBase` must be an existing directory, and an `fs:` scope naming an existing
 * directory must name its real location (a scope through a symlink, `/tmp/x` for `/private/tmp/x`,
 * would refuse every call under it, so it fails loudly here rather than silently later).
 */
export function checkPolicyPaths(policy: Policy): void {
  if (policy.fsBase !== undefined) {
    try {
      fsScope(policy.fsBase);
    } catch {
      throw new PolicyError('fsBase', 'must be an existing directory whose real path is canonical');
    }
  }
  for (const [i, scope] of (policy.scopes ?? []).entries()) {
    if (!scope.startsWith('fs:/')) continue;
    const dir = scope.slice('fs:'.length).replace(/(?<=.)\/$/, '');
    if (!existsSync(dir)) continue;
    let real: string;
    try {
      real = fsScope(dir);
    } catch {
      continue; // a file, not a directory: the resolver still checks calls on it by its real location
    }
    const named = dir === '/' ? 'fs:/' : `fs:${dir}/`;
    if (real !== named) throw new PolicyError(`scopes[${i}]`, `names a directory whose real location is ${real.slice('fs:'.length)}; name that instead (calls are checked where paths really lead)`);
  }
}

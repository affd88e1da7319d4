import { limits } from './limits';
import type { ResourceCheck } from './reasons';
import { utf8Length } from './utf8Length';

/**
 * Virtual resources are `scheme:/seg/seg…` (or the root `scheme:/`). The ledger never normalizes a
 * resource: anything that is not already in canonical form is rejected, so the form that is checked
 * against the scopes is the only form the tool can act on.
 */
const schemePattern = /^[a-z][a-z0-9+.-]{0,31}:\//;
// C0/C1 controls, NUL, DEL; and format characters (bidi overrides, zero-width joiners, BOM) that make
// two different strings look alike.
const forbiddenChars = /[\u0000-\u001f\u007f-\u009f\p{Cf}\\%]/u;
// Printable ASCII is unchanged by NFC and NFKC and is well formed: such resources skip normalization.
const printableAscii = /^[\x20-\x7e]*$/;

/** True when `resource` is a canonical virtual resource. */
export function isCanonicalResource(resource: unknown): resource is string {
  if (typeof resource !== 'string') return false;
  if (resource.length > limits.resourceBytesMax || utf8Length(resource) > limits.resourceBytesMax) return false;
  if (forbiddenChars.test(resource)) return false;
  if (!printableAscii.test(resource)) {
    if (!resource.isWellFormed()) return false;
    if (resource.normalize('NFC') !== resource || resource.normalize('NFKC') !== resource) return false;
  }
  const scheme = schemePattern.exec(resource);
  if (scheme === null) return false;
  const path = resource.slice(scheme[0].length);
  if (path === '') return true; // the root
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.' || segment === '..') return false;
    if (utf8Length(segment) > limits.segmentBytesMax) return false;
  }
  return true;
}

/** True when `scope` is a canonical scope: a canonical resource, optionally with one trailing '/'. */
export function isCanonicalScope(scope: unknown): scope is string {
  if (typeof scope !== 'string') return false;
  if (isCanonicalResource(scope as unknown)) return true;
  return scope.endsWith('/') && isCanonicalResource(scope.slice(0, -1));
}

/**
 * 'x/' covers what is strictly below x/ (and the root 'scheme:/' itself); 'x' covers only x. A
 * folder scope `fs:/…/x/` also covers the folder `fs:/…/x` itself, so a granted folder can be
 * listed (issue 32, item 8); virtual schemes keep the contract's rule (`notes:/drafts/` never
 * covers `notes:/drafts`). Never a sibling sharing the prefix (`x_evil`): neither x nor below x/.
 */
export function scopeCovers(scope: string, resource: string): boolean {
  if (scope === resource) return true;
  if (!scope.endsWith('/')) return false;
  // Not equal, so a resource that starts with the scope is strictly longer: strictly below it.
  if (resource.startsWith(scope)) return true;
  return resource.startsWith('fs:/') && resource.length === scope.length - 1 && scope.startsWith(resource);
}

/** Checks every resource a call names: canonical first, then covered by some scope. */
export function checkResources(resources: readonly unknown[], scopes: readonly string[]): ResourceCheck {
  if (resources.length > limits.resourcesPerCallMax) return 'invalid_resource';
  for (const resource of resources) if (!isCanonicalResource(resource)) return 'invalid_resource';
  for (const resource of resources as readonly string[]) {
    if (!scopes.some((scope) => scopeCovers(scope, resource))) return 'resource_not_permitted';
  }
  return 'ok';
}

import { lstatSync, readdirSync } from 'node:fs';
import { fsResource } from '../../resources/fs/fsResource';
import { ResourceRefusedError } from '../../resources/resourceRefusedError';
import { urlResource } from '../../resources/url/urlResource';
import type { TemplateResolvers } from './resourceTemplates';
import { urlReadAlike } from './urlAmbiguity';

const invalid = (): ResourceRefusedError => new ResourceRefusedError('invalid_resource');

/**
 * What the proxy refuses before resolving, because the upstream server would read the text
 * differently from the kernel: it forwards the agent's path as written, and servers (the reference
 * filesystem server among them) normalize `.`/`..` lexically before following symlinks (the kernel
 * applies a `..` after a symlink to the link's target) and expand a leading `~` to their home.
 * Refusing these keeps "what the proxy checked" and "what the server opens" the same object.
 */
function upstreamAmbiguous(path: string): boolean {
  const components = path.split('/');
  if (components.some((c) => c === '.' || c === '..')) return true;
  return !path.startsWith('/') && (components[0] ?? '').startsWith('~');
}

/**
 * The first name of `realPath` that does not exist, when its existing parent holds another entry
 * equal to it under NFC: the reference filesystem server opens that entry for a path that does
 * not exist (it matches names by NFC), so the proxy would have checked a different object.
 */
function hasUnicodeTwin(realPath: string): boolean {
  const segments = realPath.split('/').filter((s) => s !== '');
  let parent = '';
  for (const name of segments) {
    const here = `${parent}/${name}`;
    if (lstatSync(here, { throwIfNoEntry: false }) === undefined) {
      const wanted = name.normalize('NFC');
      return readdirSync(parent === '' ? '/' : parent).some((entry) => entry !== name && entry.normalize('NFC') === wanted);
    }
    parent = here;
  }
  return false;
}

/**
 * The proxy's resolvers: `fs:` templates give the canonical resource of where the path really
 * leads (`fsResource`, symlinks in every component resolved, a relative path against the policy's
 * `fsBase`), so a symlink inside a granted folder that points outside is refused before the
 * upstream sees the call; `url:` templates give `urlResource`'s canonical form of a URL that every
 * common parser reads alike (urlAmbiguity.ts). Anything that cannot be resolved throws, which the
 * ledger records as `invalid_resource` (fail closed).
 */
export const realResolvers: TemplateResolvers = {
  fs: (path, base) => {
    if (upstreamAmbiguous(path)) throw invalid();
    const resource = fsResource(path, base !== undefined ? { base } : {});
    try {
      if (hasUnicodeTwin(resource.slice('fs:'.length))) throw invalid();
    } catch (error) {
      if (error instanceof ResourceRefusedError) throw error;
      throw invalid(); // an unreadable directory: cannot tell, so refuse
    }
    return resource;
  },
  url: (text) => {
    if (!urlReadAlike(text)) throw invalid();
    return urlResource(text);
  },
};

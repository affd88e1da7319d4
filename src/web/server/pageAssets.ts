import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** The bundled page, as `npm run build` writes it to dist/web/ (see scripts/buildPage.mjs). */
export interface PageAsset {
  readonly contentType: string;
  readonly body: Buffer;
}

export const pageFiles: Readonly<Record<string, { readonly file: string; readonly contentType: string }>> = Object.freeze({
  '/': { file: 'index.html', contentType: 'text/html; charset=utf-8' },
  '/app.js': { file: 'app.js', contentType: 'text/javascript; charset=utf-8' },
  '/app.css': { file: 'app.css', contentType: 'text/css; charset=utf-8' },
});

/** The package root: the nearest folder above this module with our package.json (src/ and dist/src/ alike). */
export function packageRoot(from: string = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'agent-tool-capabilities') return dir;
    if (path.dirname(dir) === dir) throw new Error('cannot find the agent-tool-capabilities package root');
  }
}

/** Reads the bundle once at start, so a request never touches the file system. */
export function loadPageAssets(dir: string = path.join(packageRoot(), 'dist', 'web')): ReadonlyMap<string, PageAsset> {
  const assets = new Map<string, PageAsset>();
  for (const [route, { file, contentType }] of Object.entries(pageFiles)) {
    const full = path.join(dir, file);
    if (!existsSync(full)) throw new Error(`the audit page is not built (${full} is missing): run npm run build`);
    assets.set(route, { contentType, body: readFileSync(full) });
  }
  return assets;
}

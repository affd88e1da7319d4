// Bundles the audit page (src/web/page) into dist/web/ for `atc serve`: one script, one style sheet
// and the HTML, with every dependency (uPlot included) inside, so the page needs no network.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const page = path.join(root, 'src/web/page');
const out = path.join(root, 'dist/web');
mkdirSync(out, { recursive: true });
const common = { bundle: true, minify: true, legalComments: 'linked', logLevel: 'warning', target: ['chrome110', 'firefox115', 'safari16'] };
await build({ ...common, entryPoints: [path.join(page, 'main.ts')], outfile: path.join(out, 'app.js'), format: 'iife', platform: 'browser', tsconfig: path.join(page, 'tsconfig.json') });
await build({ ...common, entryPoints: [path.join(page, 'style.css')], outfile: path.join(out, 'app.css') });
copyFileSync(path.join(page, 'index.html'), path.join(out, 'index.html'));

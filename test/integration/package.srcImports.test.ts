import fs from 'node:fs';
import path from 'node:path';

// The package ships dist/src only: a module of src/ that imported experiments/ (or test/) would
// fail at run time in a user's install. Every import and require in src/ is checked.
const root = path.resolve(__dirname, '..', '..');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(path.join(dir, e.name)) : /\.(ts|tsx|mts|cts)$/.test(e.name) ? [path.join(dir, e.name)] : []));
}

/** Every module specifier: `from '…'`, `import('…')`, `require('…')`, `import '…'`. */
function specifiers(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)(['"])([^'"]+)\1/gm)) found.push(m[2] as string);
  return found;
}

it('no module under src/ imports experiments/ or test/', () => {
  const files = sources(path.join(root, 'src'));
  expect(files.length).toBeGreaterThan(100);
  const offending: string[] = [];
  for (const file of files) {
    for (const spec of specifiers(fs.readFileSync(file, 'utf8'))) {
      if (!spec.startsWith('.')) continue;
      const target = path.relative(root, path.resolve(path.dirname(file), spec));
      if (!target.startsWith(`src${path.sep}`) && target !== 'src') offending.push(`${path.relative(root, file)} → ${spec}`);
    }
  }
  expect(offending).toEqual([]);
});

it('the scan sees the imports it must refuse', () => {
  expect(specifiers("import { a } from '../../experiments/x';\nconst b = require('../test/y');\nimport '../z';\nawait import('./w');")).toEqual(['../../experiments/x', '../test/y', '../z', './w']);
});

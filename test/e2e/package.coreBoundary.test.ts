import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

// The core (domain, stream, verification, tools) depends only on itself and the interfaces it owns
// (src/stream/ports): stores, resources, transparency, integrations, the CLI… depend on the core,
// never the reverse. docs/design.md ("Layout") states the same rules.
const root = path.resolve(__dirname, '..', '..');
const coreRooms = ['domain', 'stream', 'verification', 'tools'].map((room) => path.join(root, 'src', room));

/** Outside the core, the core may import only the public error type (it imports nothing itself). */
const coreMayImportFiles = new Set([path.join(root, 'src', 'errors.ts')]);

/** Packages the core's rules are built on (docs/dependencies.md says why each). */
const corePackages = new Set(['ajv', 'ajv-formats', 'immer', 'json-canonicalize', 're2js', 'rxjs']);

/**
 * `node:` modules the core may load, per file: hashing (chain, ids), recognising a host's proxied
 * AbortSignal (hostSignal), and the parallel verifier's worker thread, which `atc verify` starts
 * from its script beside it (verifyThread, verifyWorker; the root entry never loads them). No
 * `node:fs`, `node:http`, `node:dns` elsewhere: those are the resources' and stores' (behind ports).
 * A type-only import loads nothing and is allowed.
 */
const coreNodeModules: Readonly<Record<string, readonly string[]>> = {
  'src/domain/chain.ts': ['node:crypto'],
  'src/stream/ids.ts': ['node:crypto'],
  'src/stream/hostSignal.ts': ['node:util'],
  'src/verification/verifyThread.ts': ['node:fs', 'node:path', 'node:worker_threads'],
  'src/verification/verifyWorker.ts': ['node:worker_threads'],
};

interface ModuleImport {
  readonly specifier: string;
  readonly typeOnly: boolean;
}

/** Every static import/export-from, dynamic `import()` and `require()` of a source text. */
function moduleImports(text: string): ModuleImport[] {
  const source = ts.createSourceFile('scan.ts', text, ts.ScriptTarget.ES2022, true);
  const found: ModuleImport[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: node.importClause?.isTypeOnly === true });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: node.isTypeOnly });
    } else if (ts.isCallExpression(node) && node.arguments.length > 0 && ts.isStringLiteral(node.arguments[0] as ts.Expression)) {
      const isImport = node.expression.kind === ts.SyntaxKind.ImportKeyword;
      const isRequire = ts.isIdentifier(node.expression) && node.expression.text === 'require';
      if (isImport || isRequire) found.push({ specifier: (node.arguments[0] as ts.StringLiteral).text, typeOnly: false });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** What a core file at `file` may not import, one line per offence. */
function boundaryProblems(file: string, text: string): string[] {
  const shown = path.relative(root, file).split(path.sep).join('/');
  const problems: string[] = [];
  for (const { specifier, typeOnly } of moduleImports(text)) {
    if (specifier.startsWith('.')) {
      const target = path.resolve(path.dirname(file), specifier);
      const inCore = coreRooms.some((room) => target === room || target.startsWith(room + path.sep));
      if (!inCore && !coreMayImportFiles.has(`${target}.ts`)) problems.push(`${shown} imports ${specifier} (outside the core)`);
    } else if (specifier.startsWith('node:')) {
      if (!typeOnly && !(coreNodeModules[shown] ?? []).includes(specifier)) problems.push(`${shown} loads ${specifier}`);
    } else {
      const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : (specifier.split('/')[0] as string);
      if (!corePackages.has(name)) problems.push(`${shown} imports the package ${specifier}`);
    }
  }
  return problems;
}

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
}

it('no file of the core imports from outside it, or loads a node: module not written down for it', () => {
  const files = coreRooms.flatMap(sources);
  expect(files.length).toBeGreaterThan(50);
  const problems = files.flatMap((file) => boundaryProblems(file, fs.readFileSync(file, 'utf8')));
  expect(problems).toEqual([]);
});

it('the check refuses a store, a resource, a stray node: module and an unlisted package', () => {
  const file = path.join(root, 'src', 'stream', 'example.ts');
  const text = [
    "import { memoryStore } from '../stores/memoryStore';",
    "import type { CheckedResources } from '../resources/toolContext';",
    "import { lookup } from 'node:dns/promises';",
    "import type { FileHandle } from 'node:fs/promises';",
    "export { x } from '../transparency/index';",
    "const pg = require('pg');",
    "const later = import('../cli/main');",
    "import { LedgerError } from '../errors';",
    "import type { EventStore } from './ports/eventStore';",
  ].join('\n');
  expect(boundaryProblems(file, text)).toEqual([
    'src/stream/example.ts imports ../stores/memoryStore (outside the core)',
    'src/stream/example.ts imports ../resources/toolContext (outside the core)',
    'src/stream/example.ts loads node:dns/promises',
    'src/stream/example.ts imports ../transparency/index (outside the core)',
    'src/stream/example.ts imports the package pg',
    'src/stream/example.ts imports ../cli/main (outside the core)',
  ]);
});

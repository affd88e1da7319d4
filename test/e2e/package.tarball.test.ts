import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { docExample } from '../support/consumerProject';
import { makePackedConsumer, type PackedConsumer } from '../support/packedConsumer';

// The package as a user gets it: `npm pack`, installed by npm into a fresh project (offline, from a
// lockfile of the versions we test with), then type-checked with default `tsc` settings (no
// skipLibCheck) and run. Slow (npm ci, tsc), so every check shares one install.
let consumer: PackedConsumer;
beforeAll(() => {
  consumer = makePackedConsumer(['typescript', '@types/node', 'ai']);
}, 180_000);
afterAll(() => consumer?.remove());

const subpaths = ['agent-tool-capabilities', 'agent-tool-capabilities/postgres', 'agent-tool-capabilities/transparency', 'agent-tool-capabilities/mcp', 'agent-tool-capabilities/ai-sdk'];
const readme = (): string => docExample('README.md', /## Example\s[\s\S]*?```js\n([\s\S]*?)```/) as string;
const tsconfig = { compilerOptions: { strict: true, module: 'nodenext', target: 'es2022', noEmit: true } };

it('ships the product only: no experiments, results, benchmarks, mutation tooling or tests', () => {
  const listing = execFileSync('tar', ['-tzf', consumer.tarball], { encoding: 'utf8' }).split('\n');
  expect(listing).toContain('package/dist/src/index.js');
  expect(listing).toContain('package/dist/src/evidence/verifyEvidence.js');
  expect(listing.filter((f) => /^package\/(dist\/)?(experiments|results|test|bench|scripts)\//.test(f))).toEqual([]);
});

it('atc verify checks an evidence file from the installed package, and refuses an edited one', () => {
  // The verifier is product (src/evidence); the reproducer that writes evidence stays in experiments/.
  const reference = path.join(__dirname, '..', '..', 'results', 'reference.json');
  const verified = consumer.run('npx', ['--no-install', 'atc', 'verify', reference]);
  expect(verified).toMatchObject({ status: 0, stderr: '' });
  expect(verified.stdout.trim().endsWith('verified')).toBe(true);
  const doc = JSON.parse(fs.readFileSync(reference, 'utf8')) as { logs: { concurrencyBytes: { type: string; tool?: string }[] } };
  const admitted = doc.logs.concurrencyBytes.find((e) => e.type === 'call.admitted') as { tool?: string };
  admitted.tool = 'notes.delete';
  const edited = path.join(consumer.dir, 'edited.json');
  fs.writeFileSync(edited, JSON.stringify(doc));
  const refused = consumer.run('npx', ['--no-install', 'atc', 'verify', edited]);
  expect(refused.status).toBe(1);
  expect(refused.stdout + refused.stderr).toMatch(/logs\.concurrencyBytes seq \d+: hash:[\s\S]*NOT VERIFIED/);
});

it('runs the README example as written', () => {
  fs.writeFileSync(path.join(consumer.dir, 'example.mjs'), readme());
  const r = consumer.run(process.execPath, ['example.mjs']);
  expect(r.stderr).toBe('');
  expect(r.stdout).toMatch(/status: 'completed'[\s\S]*status: 'rejected'[\s\S]*true\n$/);
});

it('type-checks the README example and an import of every subpath with default tsc settings (no skipLibCheck)', () => {
  fs.writeFileSync(path.join(consumer.dir, 'example.mts'), readme());
  fs.writeFileSync(path.join(consumer.dir, 'subpaths.mts'), subpaths.map((s, i) => `import * as m${i} from '${s}';`).join('\n') + `\nconsole.log(${subpaths.map((_, i) => `m${i}`).join(', ')});\n`);
  // `ai`'s own typings (@ai-sdk/provider) import 'json-schema' without depending on its types
  // (@types/json-schema, not in our lockfile, so not installable offline): a stand-in for them.
  fs.writeFileSync(path.join(consumer.dir, 'json-schema.d.ts'), "declare module 'json-schema' {\n  export type JSONSchema7 = { [key: string]: unknown };\n  export type JSONSchema7Definition = JSONSchema7 | boolean;\n}\n");
  fs.writeFileSync(path.join(consumer.dir, 'tsconfig.json'), JSON.stringify({ ...tsconfig, files: ['example.mts', 'subpaths.mts', 'json-schema.d.ts'] }));
  const r = consumer.run(process.execPath, [path.join(consumer.dir, 'node_modules/typescript/bin/tsc'), '-p', '.']);
  expect(r.stdout + r.stderr).toBe('');
  expect(r.status).toBe(0);
}, 180_000);

it.each(subpaths)('%s loads with require() and import()', (subpath) => {
  const cjs = consumer.run(process.execPath, ['-e', `console.log(Object.keys(require('${subpath}')).length > 0)`]);
  expect(cjs).toMatchObject({ stdout: 'true\n', stderr: '' });
  const esm = consumer.run(process.execPath, ['--input-type=module', '-e', `console.log(Object.keys(await import('${subpath}')).length > 0)`]);
  expect(esm).toMatchObject({ stdout: 'true\n', stderr: '' });
});

it('npx runs the installed binary by the package name, and atc too', () => {
  const version = (JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;
  for (const args of [['--no-install', 'agent-tool-capabilities', '--version'], ['-y', 'agent-tool-capabilities', '--version'], ['--no-install', 'atc', '-v']]) {
    expect(consumer.run('npx', args)).toMatchObject({ status: 0, stdout: `${version}\n` });
  }
});

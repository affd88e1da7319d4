import fs from 'node:fs';
import path from 'node:path';
import { runPolicy } from '../../src/cli/commands/policy';
import { captureIo } from '../support/sqliteFiles';
import { root, tempDir } from '../support/mcpProxy';

// The policies docs/policies.md shows are files under examples/policies/; here they go through
// `atc policy check` against the real tools and `atc policy test` with their cases, and the docs
// must show each file's JSON as it is, so neither can drift.
const filesystemServer = path.join(root, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const paymentsServer = path.join(root, 'examples/policies/payments-server.mjs');
const example = (name: string): string => path.join(root, 'examples', name);
const docs = fs.readFileSync(path.join(root, 'docs/policies.md'), 'utf8');
const now = Date.parse('2026-01-01T08:00:00Z');

let tmp: ReturnType<typeof tempDir>;
beforeAll(() => (tmp = tempDir()));
afterAll(() => tmp.cleanup());

async function policy(args: string[]): Promise<{ code: number; out: string }> {
  const io = captureIo();
  const code = await runPolicy(args, io, () => now);
  return { code, out: io.stdout.join('\n') };
}

/** Every ```json block of the docs, parsed (the ones that are JSON). */
function docBlocks(): unknown[] {
  return Array.from(docs.matchAll(/```json\n([\s\S]*?)```/g), (m) => {
    try {
      return JSON.parse(m[1] as string) as unknown;
    } catch {
      return undefined;
    }
  });
}

describe('examples/policies: the policies docs/policies.md shows', () => {
  const upstreams: Record<string, () => string[]> = {
    'policies/filesystem.json': () => ['--', process.execPath, filesystemServer, tmp.dir],
    'policies/payments.json': () => ['--', process.execPath, paymentsServer],
  };

  it.each(Object.keys(upstreams))('%s passes atc policy check against its server’s tools', async (name) => {
    const r = await policy(['check', example(name), ...(upstreams[name] as () => string[])()]);
    expect(r.out).toMatch(/^ok: no problems \(checked against \d+ tools from the upstream\)$/);
    expect(r.code).toBe(0);
  });

  it.each(['filesystem', 'payments'])('%s: its cases pass atc policy test', async (name) => {
    const r = await policy(['test', example(`policies/${name}.json`), example(`policies/${name}.cases.json`), ...(upstreams[`policies/${name}.json`] as () => string[])()]);
    expect(r.out).not.toContain('FAIL');
    expect(r.code).toBe(0);
  });

  it.each(['policies/filesystem.json', 'policies/payments.json'])('docs/policies.md shows %s as it is', (name) => {
    expect(docBlocks()).toContainEqual(JSON.parse(fs.readFileSync(example(name), 'utf8')));
  });
});

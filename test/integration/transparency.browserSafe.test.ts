// src/transparency/verifier.ts is the entry an audit page bundles: nothing it reaches, directly or
// through other modules, may import a node: module, a Node global such as Buffer or process, or
// code outside src/transparency.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';

const dir = path.join(__dirname, '..', '..', 'src', 'transparency');

function reachable(entry: string): Map<string, string> {
  const seen = new Map<string, string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    const text = readFileSync(path.join(dir, file), 'utf8');
    seen.set(file, text);
    for (const match of text.matchAll(/from '([^']+)'/g)) {
      const target = match[1] as string;
      if (target.startsWith('./')) visit(`${target.slice(2)}.ts`);
      else seen.set(`${file} -> ${target}`, '');
    }
  };
  visit(entry);
  return seen;
}

test('the verifier entry reaches only pure modules of src/transparency', () => {
  const modules = reachable('verifier.ts');
  const outside = [...modules.keys()].filter((k) => k.includes(' -> '));
  expect(outside).toEqual([]);
  expect(modules.size).toBeGreaterThan(8);
  for (const [file, text] of modules) {
    expect({ file, buffer: /\bBuffer\b|\bprocess\./.test(text.replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, '')) }).toEqual({ file, buffer: false });
  }
});

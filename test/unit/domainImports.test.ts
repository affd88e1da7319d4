import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// The core's modules form no import cycle (type-only imports included): a cycle means a type lives
// away from the data it describes, and it makes load order matter. Read from the source, so a
// new cycle fails here whatever the build does.

const domain = join(__dirname, '..', '..', 'src', 'domain');

function importsOf(file: string): string[] {
  const text = readFileSync(join(domain, file), 'utf8');
  const found: string[] = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s+'(\.\/[^']+)'/g)) found.push(`${(m[1] as string).slice(2)}.ts`);
  return [...new Set(found)];
}

/** Every cycle's path (each found once from its first module), by a depth-first walk. */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const walk = (node: string): void => {
    state.set(node, 'open');
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') found.push([...path.slice(path.indexOf(next)), next]);
      else if (!state.has(next)) walk(next);
    }
    path.pop();
    state.set(node, 'done');
  };
  for (const node of [...graph.keys()].sort()) if (!state.has(node)) walk(node);
  return found;
}

describe('src/domain imports', () => {
  const files = readdirSync(domain).filter((f) => f.endsWith('.ts'));
  const graph = new Map(files.map((f) => [f, importsOf(f)] as const));

  it('finds the imports it checks (the walk reads the source)', () => {
    expect(graph.get('evolve.ts')).toEqual(expect.arrayContaining(['applyEvent.ts', 'state.ts']));
    expect(cycles(new Map([['a.ts', ['b.ts']], ['b.ts', ['a.ts']]]))).toEqual([['a.ts', 'b.ts', 'a.ts']]);
  });

  it('form no import cycle, type-only imports included', () => {
    expect(cycles(graph).map((c) => c.join(' → '))).toEqual([]);
  });
});

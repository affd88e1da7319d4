import type { JsonObject, JsonValue } from '../domain/json';
import { limits } from '../domain/limits';
import { linearRegExp } from './linearRegExp';

// A narrowing that constrains a property the tool does not declare constrains nothing (the tool's
// schema refuses undeclared properties anyway): a typo such as `pth` for `path` would silently let
// every value through. Found here so `issue` and `attenuate` can refuse it, naming it.

type Node = { readonly [key: string]: JsonValue };
const isObject = (v: unknown): v is Node => v !== null && typeof v === 'object' && !Array.isArray(v);

/** What one object level of the tool's schema declares: its names, pattern names, or anything (open). */
interface ToolLevel {
  readonly open: boolean;
  readonly names: Map<string, JsonValue[]>;
  readonly patterns: readonly string[];
}

function resolveLocal(root: JsonValue, ref: string): JsonValue | undefined {
  if (ref !== '#' && !ref.startsWith('#/')) return undefined;
  let node: JsonValue | undefined = root;
  let pointer: string;
  try {
    pointer = decodeURIComponent(ref.slice(1));
  } catch {
    return undefined;
  }
  for (const raw of pointer === '' ? [] : pointer.slice(1).split('/')) {
    const token = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    node = isObject(node) || Array.isArray(node) ? (node as Record<string, JsonValue>)[token] : undefined;
    if (node === undefined) return undefined;
  }
  return node;
}

// A level's schemas: the node, what it `$ref`s, and its combinator branches (each applies to the same object).
function expand(root: JsonValue, start: readonly JsonValue[], combinators: readonly string[]): Node[] {
  const out: Node[] = [];
  const stack = [...start];
  const seen = new Set<JsonValue>();
  while (stack.length > 0 && out.length < 1_024) {
    const node = stack.pop();
    if (!isObject(node) || seen.has(node)) continue;
    seen.add(node);
    out.push(node);
    if (typeof node.$ref === 'string') stack.push(resolveLocal(root, node.$ref) ?? null);
    for (const key of combinators) {
      const value = node[key];
      if (Array.isArray(value)) stack.push(...value);
      else if (isObject(value)) stack.push(value);
    }
  }
  return out;
}

function toolLevel(root: JsonValue, schemas: readonly JsonValue[]): ToolLevel {
  const nodes = expand(root, schemas, ['allOf', 'anyOf', 'oneOf', 'then', 'else']);
  const names = new Map<string, JsonValue[]>();
  const patterns: string[] = [];
  let lists = false;
  let open = false;
  for (const node of nodes) {
    if (isObject(node.properties)) {
      lists = true;
      for (const [name, sub] of Object.entries(node.properties)) (names.get(name) ?? names.set(name, []).get(name))?.push(sub);
    }
    if (isObject(node.patternProperties)) {
      lists = true;
      patterns.push(...Object.keys(node.patternProperties));
    }
    for (const key of ['additionalProperties', 'unevaluatedProperties']) if (key in node && node[key] !== false) open = true;
  }
  return { open: open || !lists, names, patterns };
}

function declares(level: ToolLevel, name: string): boolean {
  if (level.open || level.names.has(name)) return true;
  return level.patterns.some((p) => {
    try {
      return linearRegExp(p, 'u').test(name);
    } catch {
      return false;
    }
  });
}

/** The names a narrowing level constrains, and the sub-schemas it gives each named property. */
function narrowedNames(schemas: readonly Node[]): Map<string, JsonValue[]> {
  const named = new Map<string, JsonValue[]>();
  const add = (name: string, sub?: JsonValue): void => {
    const list = named.get(name) ?? named.set(name, []).get(name);
    if (sub !== undefined) list?.push(sub);
  };
  for (const node of schemas) {
    if (isObject(node.properties)) for (const [name, sub] of Object.entries(node.properties)) add(name, sub);
    if (Array.isArray(node.required)) for (const name of node.required) if (typeof name === 'string') add(name);
    for (const key of ['dependentRequired', 'dependentSchemas', 'dependencies']) {
      const map = node[key];
      if (!isObject(map)) continue;
      for (const [name, value] of Object.entries(map)) {
        add(name);
        if (Array.isArray(value)) for (const other of value) if (typeof other === 'string') add(other);
      }
    }
  }
  return named;
}

/**
 * The first property (as a path: `pth`, `opts/pth`) a narrowing constrains that the tool's
 * `inputSchema` does not declare, or undefined. Follows `properties` down while both sides list
 * them; a level the tool leaves open (no `properties`, or `additionalProperties` other than false)
 * declares every name.
 */
export function undeclaredNarrowedProperty(inputSchema: JsonObject, narrowing: JsonObject): string | undefined {
  const walk = (tool: readonly JsonValue[], narrowed: readonly JsonValue[], path: string, depth: number): string | undefined => {
    if (depth > limits.schemaNestingMax) return undefined;
    const level = toolLevel(inputSchema, tool);
    const names = narrowedNames(expand(narrowing, narrowed, ['allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else']));
    for (const [name, subs] of names) {
      if (!declares(level, name)) return path + name;
      const toolSubs = level.names.get(name);
      if (toolSubs === undefined || subs.length === 0) continue;
      const deeper = walk(toolSubs, subs, `${path}${name}/`, depth + 1);
      if (deeper !== undefined) return deeper;
    }
    return undefined;
  };
  return walk([inputSchema], [narrowing], '', 0);
}

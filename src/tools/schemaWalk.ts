import type { JsonValue } from '../domain/json';

// Which keywords hold subschemas, by JSON Schema 2020-12 and draft-07 (the two dialects read here).
// Everything else holds data (enum, const, required…), counted but never read as a schema.

/** One subschema, applied to the instance itself (once per instance). */
export const inPlaceKeywords = new Set(['not', 'if', 'then', 'else', 'contentSchema']);
/** One subschema applied to every item or member of the instance: its cost scales with the data. */
export const fanOutKeywords = new Set(['items', 'additionalItems', 'contains', 'additionalProperties', 'propertyNames', 'unevaluatedItems', 'unevaluatedProperties']);
/** Arrays of subschemas: combinators (in place) and tuples (one item each). */
export const listKeywords = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items']);
/** Objects of subschemas keyed by name; `patternProperties` applies to every matching member. */
export const mapKeywords = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies']);

export interface SubSchema {
  readonly node: JsonValue;
  readonly path: string;
  /** Applied to every item or member (a fan-out keyword, or under one). */
  readonly fanOut: boolean;
}

const isObject = (v: unknown): v is { readonly [key: string]: JsonValue } => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A JSON Pointer token (RFC 6901). */
export const pointerToken = (key: string): string => key.replaceAll('~', '~0').replaceAll('/', '~1');

/** The direct subschemas of a schema node, each with its JSON Pointer path. */
export function subSchemas(node: JsonValue, path: string, fanOut: boolean): SubSchema[] {
  const out: SubSchema[] = [];
  if (!isObject(node)) return out;
  for (const [key, value] of Object.entries(node)) {
    const at = `${path}/${pointerToken(key)}`;
    if (Array.isArray(value) && listKeywords.has(key)) {
      value.forEach((sub, i) => out.push({ node: sub, path: `${at}/${i}`, fanOut }));
    } else if (inPlaceKeywords.has(key)) out.push({ node: value, path: at, fanOut });
    else if (fanOutKeywords.has(key)) out.push({ node: value, path: at, fanOut: true });
    else if (mapKeywords.has(key) && isObject(value)) {
      const each = fanOut || key === 'patternProperties';
      // draft-07 `dependencies` maps a name to a list of names (data) or to a schema.
      for (const [name, sub] of Object.entries(value)) if (!(key === 'dependencies' && Array.isArray(sub))) out.push({ node: sub, path: `${at}/${pointerToken(name)}`, fanOut: each });
    }
  }
  return out;
}

/** JSON values in a value (itself included): the size a schema's checks are proportional to. */
export function jsonNodes(value: JsonValue): number {
  let count = 0;
  const stack: JsonValue[] = [value];
  while (stack.length > 0) {
    const v = stack.pop() as JsonValue;
    count++;
    if (v !== null && typeof v === 'object') for (const child of Object.values(v)) stack.push(child);
  }
  return count;
}

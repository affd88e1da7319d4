import type { JsonObject, JsonValue } from '../domain/json';
import { declaredNames } from './declaredNames';

const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);
const depthMax = 32;

export interface UndeclaredUse {
  /** Pointer tokens below the narrowing (`['properties', 'conten']`). */
  readonly at: readonly (string | number)[];
  readonly name: string;
  readonly kind: 'property' | 'required';
}

/**
 * Where a narrowing names a property the tool's inputSchema does not declare (in `properties` or
 * `required`, through `allOf`/`anyOf`/`oneOf`/`not`/`if`/`then`/`else`, and into nested objects
 * both declare). Such a rule silently constrains nothing, or (required) refuses every call.
 */
export function undeclaredInNarrowing(narrowing: JsonValue, inputSchema: JsonValue): UndeclaredUse[] {
  const found: UndeclaredUse[] = [];
  const walk = (n: JsonValue, schema: JsonValue | undefined, at: readonly (string | number)[], depth: number): void => {
    if (!isObject(n) || depth > depthMax) return;
    const declared = declaredNames(schema);
    if (declared !== undefined) {
      if (isObject(n.properties)) {
        for (const [name, sub] of Object.entries(n.properties)) {
          if (!declared.has(name)) found.push({ at: [...at, 'properties', name], name, kind: 'property' });
          else walk(sub as JsonValue, declared.get(name), [...at, 'properties', name], depth + 1);
        }
      }
      if (Array.isArray(n.required)) {
        n.required.forEach((name, i) => {
          if (typeof name === 'string' && !declared.has(name)) found.push({ at: [...at, 'required', i], name, kind: 'required' });
        });
      }
    }
    for (const key of ['allOf', 'anyOf', 'oneOf'] as const) {
      const branches = n[key];
      if (Array.isArray(branches)) branches.forEach((b, i) => walk(b, schema, [...at, key, i], depth + 1));
    }
    for (const key of ['not', 'if', 'then', 'else'] as const) if (isObject(n[key])) walk(n[key] as JsonValue, schema, [...at, key], depth + 1);
  };
  walk(narrowing, inputSchema, [], 0);
  return found;
}

import type { JsonObject, JsonValue } from '../domain/json';

const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);
const own = (o: object, key: string): boolean => Object.prototype.hasOwnProperty.call(o, key);

/**
 * The property names an object schema declares (its `properties`, and those of its
 * `allOf`/`anyOf`/`oneOf` branches), with each one's schema; `undefined` when the schema admits
 * names it does not list (no `properties` at all, `patternProperties`, or `additionalProperties`
 * other than false), so nothing can be called undeclared. The same reading as the ledger's
 * undeclared-property rule (src/tools/schemas.ts); an upstream's `patternProperties` are never run.
 */
export function declaredNames(schema: JsonValue | undefined): ReadonlyMap<string, JsonValue> | undefined {
  if (!isObject(schema)) return undefined;
  const names = new Map<string, JsonValue>();
  let listed = false;
  const collect = (s: JsonValue | undefined): boolean => {
    if (!isObject(s)) return true;
    if (own(s, 'patternProperties')) return false;
    if (own(s, 'additionalProperties') && s.additionalProperties !== false) return false;
    if (isObject(s.properties)) {
      listed = true;
      for (const [name, sub] of Object.entries(s.properties)) if (!names.has(name)) names.set(name, sub as JsonValue);
    }
    return true;
  };
  if (!collect(schema)) return undefined;
  for (const key of ['allOf', 'anyOf', 'oneOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches) && !branches.every((b) => collect(b))) return undefined;
  }
  return listed ? names : undefined;
}

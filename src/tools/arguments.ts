import { canonicalJson } from '../domain/canonicalJson';
import type { JsonObject } from '../domain/json';
import { limits } from '../domain/limits';
import { setOwn } from '../domain/ownData';

export type ArgumentSnapshot =
  | { readonly ok: true; readonly value: JsonObject; readonly canonical: string; readonly bytes: number }
  | { readonly ok: false };

const notJson: ArgumentSnapshot = Object.freeze({ ok: false });

const invalid = Symbol('invalid');
type Cloned = unknown | typeof invalid;

// A plain object of any realm (a vm context, a worker message under a sandbox): its prototype is
// null or some realm's Object.prototype. Class instances, Maps, Dates and boxed values are not.
function isPlainObject(value: object): boolean {
  if (Object.prototype.toString.call(value) !== '[object Object]') return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === null || Object.getPrototypeOf(proto) === null;
}

// Copies a value reading every property exactly once, or returns `invalid` for anything that is not
// plain JSON. Checks then run on the copy, never on the caller's object.
function clonePlainJson(value: unknown, depth: number, seen: Set<object>): Cloned {
  switch (typeof value) {
    case 'string':
      return value.length <= limits.argumentBytesMax && value.isWellFormed() ? value : invalid;
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : invalid;
    case 'object': {
      if (value === null) return null;
      if (depth >= limits.argumentDepthMax || seen.has(value)) return invalid;
      seen.add(value);
      let out: unknown = invalid;
      if (Array.isArray(value)) {
        const items: unknown[] = [];
        for (const item of value) {
          const c = item === undefined ? invalid : clonePlainJson(item, depth + 1, seen);
          if (c === invalid) { items.length = 0; seen.delete(value); return invalid; }
          items.push(c);
        }
        out = Object.freeze(items);
      } else {
        if (!isPlainObject(value) || Object.getOwnPropertySymbols(value).length > 0) {
          seen.delete(value);
          return invalid;
        }
        const copy: Record<string, unknown> = {};
        for (const [key, item] of Object.entries(value)) {
          if (item === undefined) continue; // JSON drops undefined members
          const c = clonePlainJson(item, depth + 1, seen);
          if (c === invalid) { seen.delete(value); return invalid; }
          setOwn(copy, key, c); // `__proto__` stays own data, measured and validated like any key
        }
        out = Object.freeze(copy);
      }
      seen.delete(value);
      return out;
    }
    default:
      return invalid; // undefined at top level, functions, symbols, bigint
  }
}

/**
 * Takes an immutable snapshot of a call's arguments: checks they are a plain JSON object, computes
 * the RFC 8785 canonical form and its UTF-8 length, from a frozen copy read once. Validation, `resources(args)`
 * and the tool all see the snapshot, so getters or later mutation of the caller's object cannot make
 * the tool act on something other than what was checked.
 */
export function snapshotArguments(args: unknown): ArgumentSnapshot {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return notJson;
  try {
    const value = clonePlainJson(args, 0, new Set());
    if (value === invalid) return notJson;
    const canonical = canonicalJson(value);
    const bytes = Buffer.byteLength(canonical, 'utf8');
    if (bytes > limits.argumentBytesMax) return notJson;
    return { ok: true, value: value as JsonObject, canonical, bytes };
  } catch {
    return notJson; // a getter threw, or the value changed shape while being read
  }
}

/** Canonical input bytes of an arguments object (UTF-8 length of its RFC 8785 form). */
export function inputBytesOf(args: JsonObject): number {
  return Buffer.byteLength(canonicalJson(args), 'utf8');
}

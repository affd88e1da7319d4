import { canonicalJson } from '../domain/canonicalJson';
import type { JsonObject } from '../domain/json';
import { limits } from '../domain/limits';

export type ArgumentSnapshot =
  | { readonly ok: true; readonly value: JsonObject; readonly canonical: string; readonly bytes: number }
  | { readonly ok: false };

const notJson: ArgumentSnapshot = Object.freeze({ ok: false });

function isPlainJson(value: unknown, depth: number, seen: Set<object>): boolean {
  switch (typeof value) {
    case 'string':
      return value.isWellFormed();
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object': {
      if (value === null) return true;
      if (depth >= limits.argumentDepthMax || seen.has(value)) return false;
      seen.add(value);
      let ok: boolean;
      if (Array.isArray(value)) {
        ok = value.every((item) => item !== undefined && isPlainJson(item, depth + 1, seen));
      } else {
        const proto: unknown = Object.getPrototypeOf(value);
        ok = (proto === Object.prototype || proto === null) &&
          Object.getOwnPropertySymbols(value).length === 0 &&
          Object.values(value).every((item) => item === undefined || isPlainJson(item, depth + 1, seen));
      }
      seen.delete(value);
      return ok;
    }
    default:
      return false; // undefined at top level, functions, symbols, bigint
  }
}

/**
 * Takes an immutable snapshot of a call's arguments: checks they are a plain JSON object, computes
 * the RFC 8785 canonical form and its UTF-8 length, and re-parses it. Validation, `resources(args)`
 * and the tool all see the snapshot, so getters or later mutation of the caller's object cannot make
 * the tool act on something other than what was checked.
 */
export function snapshotArguments(args: unknown): ArgumentSnapshot {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return notJson;
  try {
    if (!isPlainJson(args, 0, new Set())) return notJson;
    const canonical = canonicalJson(args);
    const bytes = Buffer.byteLength(canonical, 'utf8');
    if (bytes > limits.argumentBytesMax) return notJson;
    const value = deepFreeze(JSON.parse(canonical) as JsonObject);
    return { ok: true, value, canonical, bytes };
  } catch {
    return notJson; // a getter threw, or the value changed shape while being read
  }
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const child of Object.values(value as object)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/** Canonical input bytes of an arguments object (UTF-8 length of its RFC 8785 form). */
export function inputBytesOf(args: JsonObject): number {
  return Buffer.byteLength(canonicalJson(args), 'utf8');
}

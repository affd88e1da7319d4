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

/**
 * The walk's running count of canonical bytes: a lower bound of the UTF-8 length of the canonical
 * JSON of what has been copied so far (strings count their UTF-16 length, never more than their UTF-8
 * length; numbers count one digit). Every node adds at least one byte, so stopping when the count
 * passes the cap bounds the walk by the cap, whatever the value's shape: a value that reuses one
 * sub-object on many paths (`o = [o, o]` thirty times) is refused after about a million steps instead
 * of walking 2^30 paths.
 */
interface Walk {
  bytes: number;
  readonly seen: Set<object>;
}

const over = (walk: Walk, bytes: number): boolean => (walk.bytes += bytes) > limits.argumentBytesMax;

// Copies a value reading every property exactly once, or returns `invalid` for anything that is not
// plain JSON or whose canonical form would pass the byte cap. Checks then run on the copy, never on
// the caller's object.
function clonePlainJson(value: unknown, depth: number, walk: Walk): Cloned {
  switch (typeof value) {
    case 'string':
      return !over(walk, value.length + 2) && value.isWellFormed() ? value : invalid;
    case 'boolean':
      return over(walk, value ? 4 : 5) ? invalid : value;
    case 'number':
      return Number.isFinite(value) && !over(walk, 1) ? value : invalid;
    case 'object': {
      if (value === null) return over(walk, 4) ? invalid : null;
      const seen = walk.seen;
      if (depth >= limits.argumentDepthMax || seen.has(value)) return invalid;
      let out: unknown = invalid;
      if (Array.isArray(value)) {
        const length = value.length;
        // At least a byte per item and the commas between: refused before any item is read.
        if (walk.bytes + 2 * length + 1 > limits.argumentBytesMax) return invalid;
        if (over(walk, length === 0 ? 2 : length + 1)) return invalid; // brackets and commas; items count themselves
        seen.add(value);
        const items: unknown[] = [];
        for (let i = 0; i < length; i++) {
          const c = clonePlainJson(value[i], depth + 1, walk); // a hole or undefined is `invalid` there
          if (c === invalid) return invalid;
          items.push(c);
        }
        out = Object.freeze(items);
      } else {
        if (!isPlainObject(value) || Object.getOwnPropertySymbols(value).length > 0) return invalid;
        const keys = Object.keys(value);
        if (over(walk, 1)) return invalid; // with each member's comma below: braces and commas
        seen.add(value);
        const copy: Record<string, unknown> = {};
        for (const key of keys) {
          const item = (value as Record<string, unknown>)[key];
          if (item === undefined) continue; // JSON drops undefined members
          if (over(walk, key.length + 4)) return invalid; // quotes, colon and comma
          const c = clonePlainJson(item, depth + 1, walk);
          if (c === invalid) return invalid;
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
  try {
    // Inside the try: even `Array.isArray` throws on a revoked Proxy.
    if (args === null || typeof args !== 'object' || Array.isArray(args)) return notJson;
    const value = clonePlainJson(args, 0, { bytes: 0, seen: new Set() });
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

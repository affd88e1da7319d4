import { canonicalize } from 'json-canonicalize';

// Anything the fast path does not handle identically (a toJSON method, undefined array slots or holes,
// functions, symbols, bigint, non-finite numbers, very deep or circular values) goes to the library.
const unusual = Symbol('unusual');
const depthMax = 128;
// Strings with nothing to escape (no quote, backslash, control character or surrogate) are quoted
// as is: JSON.stringify would return the same text, slower.
const plainString = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;
const quotedKeys = new Map<string, string>();
const quotedKeysMax = 4_096;

/** A string as canonical JSON text. */
export function quote(text: string): string {
  return plainString.test(text) ? '"' + text + '"' : JSON.stringify(text);
}

function quoteKey(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = quote(key);
    if (quotedKeys.size < quotedKeysMax) quotedKeys.set(key, quoted);
  }
  return quoted;
}

// Object keys in UTF-16 code unit order, as Array.prototype.sort orders strings; insertion sort
// for the few keys events and arguments have.
function sortedKeys(value: object): string[] {
  const keys = Object.keys(value);
  if (keys.length > 16) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i] as string;
    let j = i - 1;
    while (j >= 0 && (keys[j] as string) > key) {
      keys[j + 1] = keys[j] as string;
      j--;
    }
    keys[j + 1] = key;
  }
  return keys;
}

function write(value: unknown, depth: number): string {
  switch (typeof value) {
    case 'string':
      return quote(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw unusual;
      return String(value); // the same Number::toString JSON.stringify uses
    case 'object': {
      if (value === null) return 'null';
      // Only a toJSON *method* changes JSON text; a `toJSON` member that is data (JSON.parse makes
      // no functions) is a key like any other, and the library would write it in insertion order.
      if (depth > depthMax || typeof (value as { toJSON?: unknown }).toJSON === 'function') throw unusual;
      if (Array.isArray(value)) {
        let out = '[';
        for (let i = 0; i < value.length; i++) {
          // An undefined slot or a hole is `unusual` in write: the library prints null there.
          out += (i === 0 ? '' : ',') + write(value[i], depth + 1);
        }
        return out + ']';
      }
      const keys = sortedKeys(value);
      let out = '{';
      let first = true;
      for (const key of keys) {
        const item = (value as Record<string, unknown>)[key];
        if (item === undefined) continue;
        out += (first ? '' : ',') + quoteKey(key) + ':' + write(item, depth + 1);
        first = false;
      }
      return out + '}';
    }
    default:
      throw unusual;
  }
}

/**
 * RFC 8785 (JCS) canonical JSON. Plain JSON data (every event and argument object) takes a direct
 * recursive path, about twice as fast as the library's; anything else is the library's output.
 */
export function canonicalJson(value: unknown): string {
  try {
    return write(value, 0);
  } catch (error) {
    if (error !== unusual) throw error;
    return canonicalize(value);
  }
}

/** Canonical JSON of an object without one of its top-level keys (an event without its `hash`), with no copy of the object. */
export function canonicalJsonWithout(value: object, omitted: string): string {
  return canonicalJsonOmitting(value, [omitted]);
}

/** Canonical JSON of an object without some of its top-level keys, with no copy of the object. */
export function canonicalJsonOmitting(value: object, omitted: readonly string[]): string {
  // No toJSON or array check here: the fallback copies the own keys, so both paths print those alone.
  try {
    let out = '{';
    let first = true;
    for (const key of sortedKeys(value)) {
      const item = (value as Record<string, unknown>)[key];
      if (item === undefined || omitted.includes(key)) continue;
      out += (first ? '' : ',') + quoteKey(key) + ':' + write(item, 1);
      first = false;
    }
    return out + '}';
  } catch (error) {
    if (error !== unusual) throw error;
    const rest: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    for (const key of omitted) delete rest[key];
    return canonicalize(rest);
  }
}

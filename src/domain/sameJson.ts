import { canonicalJson, canonicalJsonOmitting } from './canonicalJson';

const hasOwn = (value: object, key: string): boolean => Object.prototype.hasOwnProperty.call(value, key);
const hasToJSON = (value: object): boolean => typeof (value as { toJSON?: unknown }).toJSON === 'function';

/**
 * Whether the canonical text of `a` and that of `b` without its `omitted` top-level keys are surely
 * equal, told without building them. `false` means "different, or not told": anything that is not
 * plain JSON (a non-finite number, a toJSON method, an undefined array slot, a function) is not told.
 */
function surelySame(a: unknown, b: unknown, omitted: readonly string[] | undefined): boolean {
  switch (typeof a) {
    case 'string':
    case 'boolean':
      return a === b;
    case 'number':
      return a === b && Number.isFinite(a); // 0 and -0 both print 0; a non-finite number prints nothing
    case 'object':
      break;
    default:
      return false;
  }
  if (a === null) return b === null;
  if (b === null || typeof b !== 'object' || hasToJSON(a as object) || hasToJSON(b)) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!surelySame(a[i], b[i], undefined)) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  // Keys holding undefined print nothing. A key `a` holds that `b`'s text omits is a difference
  // (counting would not show it: `b` may hold another key instead).
  let count = 0;
  for (const key of Object.keys(ra)) {
    const value = ra[key];
    if (value === undefined) continue;
    if ((omitted !== undefined && omitted.includes(key)) || !hasOwn(rb, key) || !surelySame(value, rb[key], undefined)) return false;
    count++;
  }
  for (const key of Object.keys(rb)) if (rb[key] !== undefined && !(omitted !== undefined && omitted.includes(key))) count--;
  return count === 0;
}

/**
 * Whether `canonicalJson(a) === canonicalJsonOmitting(b, omitted)` (a decided payload against a
 * logged event without its envelope): for plain JSON that is equal (every event `verify` re-decides)
 * without building either text; otherwise the texts answer, and throw where building them throws.
 */
export function sameCanonicalJson(a: object, b: object, omitted: readonly string[]): boolean {
  return surelySame(a, b, omitted) || canonicalJson(a) === canonicalJsonOmitting(b, omitted);
}

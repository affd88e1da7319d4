import { canonicalJson, canonicalJsonOmitting } from './canonicalJson';

const unusual = Symbol('unusual');

// Structural equality that answers exactly "would their canonical JSON texts be equal?" for plain
// JSON; anything else (toJSON, undefined slots, functions, non-finite numbers) is left to the texts.
function same(a: unknown, b: unknown, omitted: readonly string[] | undefined): boolean {
  const ta = typeof a;
  if (ta === 'number' && !Number.isFinite(a as number)) throw unusual;
  if (ta === 'string' || ta === 'number' || ta === 'boolean' || a === null) {
    if (typeof b === 'number' && !Number.isFinite(b)) throw unusual;
    if (b !== null && typeof b === 'object' && (b as { toJSON?: unknown }).toJSON != null) throw unusual;
    return a === b; // finite numbers print alike exactly when they are equal (0 and -0 both print 0)
  }
  if (ta !== 'object' || (a as { toJSON?: unknown }).toJSON != null) throw unusual;
  if (b === null || typeof b !== 'object') {
    if (b !== null && typeof b !== 'string' && typeof b !== 'number' && typeof b !== 'boolean') throw unusual;
    if (typeof b === 'number' && !Number.isFinite(b)) throw unusual;
    return false;
  }
  const oa = a as object;
  const ob = b as object;
  if ((oa as { toJSON?: unknown }).toJSON != null || (ob as { toJSON?: unknown }).toJSON != null) throw unusual;
  const arrayA = Array.isArray(oa);
  if (arrayA !== Array.isArray(ob)) return false;
  if (arrayA) {
    const xa = oa as readonly unknown[];
    const xb = ob as readonly unknown[];
    if (xa.length !== xb.length) {
      for (const x of xa) if (x === undefined) throw unusual;
      for (const x of xb) if (x === undefined) throw unusual;
      return false;
    }
    let equal = true;
    for (let i = 0; i < xa.length; i++) {
      if (xa[i] === undefined || xb[i] === undefined) throw unusual;
      if (equal && !same(xa[i], xb[i], undefined)) equal = false;
    }
    return equal;
  }
  const ra = oa as Record<string, unknown>;
  const rb = ob as Record<string, unknown>;
  let count = 0;
  for (const key of Object.keys(ra)) {
    if (ra[key] === undefined || omitted?.includes(key)) continue;
    count++;
    if (rb[key] === undefined || !Object.prototype.hasOwnProperty.call(rb, key)) return false;
    if (!same(ra[key], rb[key], undefined)) return false;
  }
  for (const key of Object.keys(rb)) if (rb[key] !== undefined && !omitted?.includes(key)) count--;
  return count === 0;
}

/**
 * Whether `canonicalJson(a) === canonicalJsonOmitting(b, omitted)` (a decided payload against a
 * logged event without its envelope), answered without building either text when both are plain JSON.
 */
export function sameCanonicalJson(a: object, b: object, omitted: readonly string[]): boolean {
  try {
    for (const key of omitted) if ((a as Record<string, unknown>)[key] !== undefined) throw unusual;
    if (same(a, b, omitted)) return true;
    // A difference found early may come before a value no canonical writer prints (an infinity, a
    // toJSON): the texts then decide, and throw where building them throws. Only on a mismatch,
    // which in verify is a problem found.
    throw unusual;
  } catch (error) {
    if (error !== unusual) throw error;
    return canonicalJson(a) === canonicalJsonOmitting(b, omitted);
  }
}

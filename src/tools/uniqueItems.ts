import type Ajv from 'ajv';
import { canonicalJson } from '../domain/canonicalJson';

/**
 * Whether no two items of an array are equal as JSON Schema defines equality (same JSON value;
 * object member order ignored), in time linear in the array's size: each item is hashed once, by
 * value for scalars and by its RFC 8785 canonical text for objects and arrays. ajv's own check
 * compares every pair of non-scalar items (one 150 KB call held the admission step for seconds).
 */
export function itemsAreUnique(items: readonly unknown[]): boolean {
  const strings = new Set<string>();
  const numbers = new Set<number>();
  const structured = new Set<string>();
  let sawTrue = false;
  let sawFalse = false;
  let sawNull = false;
  for (const item of items) {
    let repeated: boolean;
    if (typeof item === 'string') repeated = strings.size === strings.add(item).size;
    // A Set holds -0 and 0 as one value, as JSON Schema equality wants.
    else if (typeof item === 'number') repeated = numbers.size === numbers.add(item).size;
    else if (item === true) repeated = sawTrue || !(sawTrue = true);
    else if (item === false) repeated = sawFalse || !(sawFalse = true);
    else if (item === null) repeated = sawNull || !(sawNull = true);
    else repeated = structured.size === structured.add(canonicalJson(item)).size;
    if (repeated) return false;
  }
  return true;
}

/** Replaces ajv's pairwise `uniqueItems` with the linear check (same keyword, same meaning). */
export function useLinearUniqueItems(ajv: Ajv): void {
  ajv.removeKeyword('uniqueItems');
  ajv.addKeyword({
    keyword: 'uniqueItems',
    type: 'array',
    schemaType: 'boolean',
    compile: (unique: boolean) => (unique ? (data: unknown[]) => itemsAreUnique(data) : () => true),
  });
}

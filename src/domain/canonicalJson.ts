import { canonicalize } from 'json-canonicalize';

/** RFC 8785 (JCS) canonical JSON. */
export function canonicalJson(value: unknown): string {
  return canonicalize(value);
}

/** Schema names the store accepts: plain lower-case identifiers, so quoting is only a formality. */
export const schemaNamePattern = /^[a-z_][a-z0-9_]{0,62}$/;

export function quoteIdent(name: string): string {
  if (!schemaNamePattern.test(name)) throw new TypeError(`schema must match ${schemaNamePattern}`);
  return `"${name}"`;
}

/** A non-negative integer as a SQL literal (for the one-round-trip simple queries, which take no parameters). */
export function intLiteral(value: number): string {
  if (!Number.isSafeInteger(value) || value < 0) throw new TypeError('expected a non-negative safe integer');
  return String(value);
}

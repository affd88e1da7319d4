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

/**
 * A string as a SQL literal, exactly what pg's `escapeLiteral` returns (property-tested equal,
 * test/stores/postgresSql.test.ts): quotes doubled, and with any backslash the E'' form with
 * backslashes doubled, so it reads the same whatever `standard_conforming_strings` is. Why not
 * `escapeLiteral` itself: it builds its result one character at a time, and every appended event
 * body passes through it (≈ 340 characters each); this does two native scans and, for the bodies'
 * usual case (no quote, no backslash), one concatenation. It was the largest allocation site of a
 * client at 16 processes (≈ 14 % of bytes allocated; docs/postgres.md, Figures).
 */
export function stringLiteral(text: string): string {
  const quoted = text.includes("'") ? text.replaceAll("'", "''") : text;
  if (!text.includes('\\')) return `'${quoted}'`;
  return ` E'${quoted.replaceAll('\\', '\\\\')}'`;
}
